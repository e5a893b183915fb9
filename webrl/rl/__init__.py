"""The WebRL method: advantages, losses, replay, curriculum, and the phase loop."""
