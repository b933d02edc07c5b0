"""The server's name for `textbound.text.sanitize`.

The helpers live there; the reader uses them too.
"""

from textbound.text.sanitize import hide_paths, json_safe, redact, scrub

__all__ = ["hide_paths", "json_safe", "redact", "scrub"]
