"""How settings are read and explained: list values, and one line per bad value.

`split_list` reads a list setting from the environment; `allowed_values` and `describe_error`
turn pydantic's validation errors into "TEXTBOUND_X=value: expected ..." lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

__all__ = ["LIST_FORM", "allowed_values", "describe_error", "split_list"]

LIST_FORM = "a comma-separated list (a,b) or a JSON list ([\"a\", \"b\"])"


def split_list(value: Any) -> Any:
    """Read a list setting: a JSON list, or comma-separated values (blank: an empty list)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a valid JSON list ({exc.msg}); expected {LIST_FORM}") from None
        return parsed
    return [part.strip() for part in text.split(",") if part.strip()]


def allowed_values(info: FieldInfo) -> str | None:
    """Describe the values a setting takes ("an integer from 1 to 50"), or None if unsaid."""
    if get_origin(info.annotation) is list:
        return LIST_FORM
    choices = [a for a in get_args(info.annotation) if a is not type(None)]
    literal = [a for c in choices for a in get_args(c)] if choices else []
    if get_origin(info.annotation) is Literal or (choices and all(
            get_origin(c) is Literal for c in choices)):
        values = literal or list(get_args(info.annotation))
        return "one of " + ", ".join(repr(v) for v in values)
    # an optional number (floor: unset means the calibration's) is described as the number
    kind = {int: "an integer", float: "a number", bool: "true or false"}.get(
        choices[0] if len(choices) == 1 else info.annotation, "")  # type: ignore[arg-type]
    low = next((getattr(m, a) for m in info.metadata for a in ("ge", "gt")
                if getattr(m, a, None) is not None), None)
    high = next((getattr(m, a) for m in info.metadata for a in ("le", "lt")
                 if getattr(m, a, None) is not None), None)
    if kind and low is not None and high is not None:
        return f"{kind} from {low} to {high}"
    return kind or None


def describe_error(exc: ValidationError, fields: Mapping[str, FieldInfo]) -> str:
    """Return one line naming each bad TEXTBOUND_ variable, its value and what it allows."""
    problems = []
    for e in exc.errors():
        name = str(e["loc"][0]) if e["loc"] else ""
        if name not in fields:
            problems.append(str(e["msg"]))
            continue
        allowed = allowed_values(fields[name])
        if e.get("type") == "value_error":  # a validator's own reason says more than the form
            reason = str(e["msg"]).removeprefix("Value error, ")
        else:
            reason = f"expected {allowed}" if allowed else str(e["msg"])
        problems.append(f"TEXTBOUND_{name.upper()}={e.get('input')!s}: {reason}")
    return "invalid setting: " + "; ".join(problems)
