"""The environment: observation, actions, backends and the Gymnasium-style WebEnv."""
