"""The server's name for `textbound.sanitize`, where the helpers live (the reader uses them too)."""

from textbound.sanitize import hide_paths, json_safe, redact, scrub

__all__ = ["hide_paths", "json_safe", "redact", "scrub"]
