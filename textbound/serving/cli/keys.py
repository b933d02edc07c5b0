"""`keys`: make, list and revoke the teacher's and students' access keys (textbound.records.keys).

The server reads the keys on every request, so a key made or revoked here counts at once,
without a restart. A key is printed once, when it is made; only its sha256 is kept.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from textbound.errors import TextboundError
from textbound.records.keys import ROLES, KeyStore, open_keys
from textbound.serving.cli._common import console, err, fail, get_settings

__all__ = ["keys_app"]

keys_app = typer.Typer(help="Access keys: a teacher key and student keys per course.",
                       no_args_is_help=True)


def _store() -> tuple[KeyStore, str]:
    settings = get_settings()
    try:
        return open_keys(settings), settings.collection
    except TextboundError as exc:
        raise fail(exc) from exc


@keys_app.command("create")
def create(
    role: Annotated[str, typer.Option(help=f"Who holds the key: {' or '.join(ROLES)}.")],
    course: Annotated[str | None, typer.Option(
        help="The course it opens: TEXTBOUND_COLLECTION (the default) or one of "
        "TEXTBOUND_COURSES.")] = None,
) -> None:
    """Make a key and print it once: keep it, it cannot be shown again."""
    if role not in ROLES:
        raise typer.BadParameter(f"{role!r} is not one of {', '.join(ROLES)}",
                                 param_hint="--role")
    if course is not None:  # a misspelt course would make a key that opens nothing
        from textbound.records.courses import course_of

        try:
            course_of(get_settings(), course)
        except TextboundError as exc:
            raise fail(exc) from exc
    store, default = _store()
    try:
        record, secret = store.create(role, course or default)
    except TextboundError as exc:
        raise fail(exc) from exc
    finally:
        store.close()
    err.print(f"made {record.role} key {record.id} for course {record.course!r}; it is shown "
              "this once:")
    print(secret)


@keys_app.command("list")
def list_keys() -> None:
    """List the keys: id, role, course, when made and revoked (never the keys themselves)."""
    store, _ = _store()
    try:
        records = store.records()
    except TextboundError as exc:
        raise fail(exc) from exc
    finally:
        store.close()
    table = Table(title="access keys")
    for column in ("id", "role", "course", "created", "revoked"):
        table.add_column(column)
    for record in records:
        row = record.public()
        table.add_row(*(str(row[c] or "") for c in ("id", "role", "course", "created",
                                                      "revoked")))
    console.print(table)


@keys_app.command("revoke")
def revoke(key_id: Annotated[str, typer.Argument(help="The key's id (`textbound keys list`).")]
           ) -> None:
    """Revoke a key: the server refuses it from its next request on."""
    store, _ = _store()
    try:
        revoked = store.revoke(key_id)
    except TextboundError as exc:
        raise fail(exc) from exc
    finally:
        store.close()
    if not revoked:
        raise fail(f"no key {key_id!r} that is not already revoked (see `textbound keys list`)")
    err.print(f"key {key_id} revoked")
