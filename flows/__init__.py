"""TODO: filled by its module."""
