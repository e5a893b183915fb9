"""Running agents over tasks: one episode or many in lockstep (`runner`, `llm`), spread over
worker processes that share one served model (`workers`), and the per-split summaries of the
episodes (`summary`, `taxonomy`, `oracle`'s step-count buckets). Both `webrl eval` and the
phase loop (rl/loop.py) run their episodes here; this layer imports only agent, models, env,
tasks and sites."""
