"""The `webrl` command line."""
