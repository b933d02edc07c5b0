"""Make values safe to send: valid Unicode, no credentials, JSON-representable floats."""

from __future__ import annotations

import math
import re
from typing import Any

from textbound.text import valid_unicode

_CREDENTIALS = re.compile(r"(?i)(\w+://)[^/@\s]+@|((?:api[_-]?key|password|token)=)[^&\s'\"]+")


def scrub(value: Any) -> Any:
    """Replace lone surrogates (text that is not valid Unicode) with U+FFFD, recursively."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def redact(value: Any) -> Any:
    """Hide credentials (URL user:password, api_key= and the like) in text, recursively."""
    if isinstance(value, str):
        return _CREDENTIALS.sub(lambda m: f"{m.group(1)}***@" if m.group(1)
                                else f"{m.group(2)}***", value)
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def json_safe(value: Any) -> Any:
    """Replace floats JSON cannot represent (inf, nan) with their text, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
