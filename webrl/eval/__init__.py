"""Evaluation: run agents over task splits, summarise, benchmark the env."""
