"""Make values safe to send: valid Unicode, no credentials, JSON-representable floats."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from textbound.settings import Settings
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


def _roots(settings: Settings | None) -> list[tuple[str, str]]:
    """(absolute folder, what a response says instead), longest first."""
    from textbound.settings import PACKAGE_ROOT

    named = [(getattr(settings, "data_dir", None), "<data folder>"),
             (getattr(settings, "corpus_dir", None), "<corpus>"),
             (PACKAGE_ROOT, "<textbound>"), (Path.home(), "~")]
    out = []
    for folder, label in named:
        if folder is None:
            continue
        for form in {str(Path(folder)), os.path.realpath(folder)}:
            if len(form) > 1:
                out.append((form.rstrip("/"), label))
    return sorted(out, key=lambda r: -len(r[0]))


def hide_paths(value: Any, settings: Settings | None) -> Any:
    """Write server paths relative to the data folder or corpus in text, recursively.

    `/srv/textbound/data/uploads/x.md` becomes `<data folder>/uploads/x.md`: a response tells a
    client which file is meant without showing how the server's disk is laid out.
    """
    if isinstance(value, str):
        for root, label in _roots(settings):
            if root in value:
                value = re.sub(re.escape(root) + r"(?=/|\b|$)", label, value)
        return value
    if isinstance(value, dict):
        return {k: hide_paths(v, settings) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [hide_paths(v, settings) for v in value]
    return value
