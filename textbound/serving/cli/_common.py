"""What every command shares: the Typer app, the consoles, exit codes, settings and arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from textbound.errors import NotIngestedError, TextboundError

EXIT_ANSWERED = 0
"""Answered (or refused, unless --fail-on-refusal)."""
EXIT_USAGE = 2
"""A usage, configuration or setup error: a bad option or TEXTBOUND_ value, a missing path, a
store another process holds. The one-line message says what to change."""
EXIT_REFUSED = 3
"""`ask --fail-on-refusal` and the question was refused."""
EXIT_NOT_INGESTED = 4
"""The collection has no documents yet: run `textbound ingest PATH`."""

app = typer.Typer(
    name="textbound",
    help="Answer questions only from your documents, with citations, and refuse with a reason "
    "when they don't say. Settings come from TEXTBOUND_* environment variables or .env "
    "(every one: docs/settings.md).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)


def fail(exc: BaseException | str) -> typer.Exit:
    """Print the error on one line; return the Exit to raise (4: nothing ingested, else 2)."""
    err.print("[bold red]error:[/] " + escape(str(exc)), soft_wrap=True)  # one line, unwrapped
    code = EXIT_NOT_INGESTED if isinstance(exc, NotIngestedError) else EXIT_USAGE
    return typer.Exit(code=code)


def get_settings(collection: str | None = None, **overrides: Any) -> Any:
    """Return the settings (for `collection` when given), or exit 2 naming the bad value.

    A collection that TEXTBOUND_COURSES names is that course, as the server serves it: its
    own audit log, profile and conversations (`textbound.records.courses`).
    """
    from textbound.records.courses import course_of
    from textbound.settings import load_settings

    values = {k: v for k, v in overrides.items() if v is not None}
    try:
        settings = load_settings(**values)
        if collection and collection in settings.courses:
            course = course_of(settings, collection).settings
            return course.model_copy(update=values) if values else course
        if collection:
            return load_settings(**values, collection=collection)
        return settings
    except TextboundError as exc:  # one line naming the variable and what it allows
        raise fail(exc) from exc


def choices(setting: str) -> Callable[[str | None], str | None]:
    """Return an option callback accepting only the values the setting allows (exit 2 else)."""
    from typing import get_args

    from textbound.settings import Settings

    allowed = [str(a) for t in get_args(Settings.model_fields[setting].annotation)
               for a in (get_args(t) or [t]) if a is not type(None)]

    def check(value: str | None) -> str | None:
        if value == "":  # an empty value (e.g. an unset shell variable) means "not given"
            return None
        if value is not None and value not in allowed:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}")
        return value

    return check

