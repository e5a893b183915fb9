"""WebRL: self-evolving online curriculum RL for LLM web agents.

Layers (imports point down only): sites -> tasks -> env -> agent/models -> rl -> eval/report -> cli.
"""

__version__ = "0.1.0"
