"""Agents: scripted (oracle, random) and, later, LLM policies."""
