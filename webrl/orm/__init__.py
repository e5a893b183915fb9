"""The outcome reward model: prompt, data, scorers, training, metrics."""
