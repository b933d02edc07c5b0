"""`textbound migrate-store`: convert the old embedded store's collections to Qdrant Edge."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn
from rich.table import Table

from textbound.errors import TextboundError

__all__ = ["migrate_store_command"]


def migrate_store_command(
    collection: Annotated[list[str] | None, typer.Option(
        "--collection", help="Collection to convert (repeatable). Default: every collection "
        "the old store holds.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Convert collections made by the old embedded store (qdrant-client local mode) to Edge.

    Reads <qdrant_path>/collection/ (left as it is) and writes <qdrant_path>/edge/; a collection
    already converted is skipped. Stop other textbound processes on this folder first.

    Example: textbound migrate-store
    """
    from textbound.documents.store._migrate import legacy_collections, migrate
    from textbound.settings import load_settings

    err = Console(stderr=True)
    try:
        settings = load_settings()
        if settings.qdrant_url:
            raise TextboundError("TEXTBOUND_QDRANT_URL is set: a Qdrant server needs no "
                                 "migration (migrate-store converts the embedded store only).")
        if not legacy_collections(settings):
            err.print(f"Nothing to convert: no old-format collections in {settings.qdrant_path}.")
            return
        with Progress(TextColumn("{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total} points"), console=err,
                      disable=as_json or not err.is_terminal) as bar:
            tasks: dict[str, TaskID] = {}

            def progress(name: str, done: int, total: int) -> None:
                if name not in tasks:
                    tasks[name] = bar.add_task(name, total=total)
                bar.update(tasks[name], completed=done)

            results = migrate(settings, collection or None, progress)
    except TextboundError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(code=2) from exc
    if as_json:
        print(json.dumps([r.__dict__ for r in results], indent=2))
        return
    t = Table(title="Converted to Qdrant Edge")
    for col in ("collection", "points", "status", "seconds"):
        t.add_column(col)
    for r in results:
        t.add_row(r.collection, str(r.points), r.status, f"{r.seconds:.1f}")
    Console().print(t)
    err.print(f"The old folder {settings.qdrant_path}/collection is kept; delete it once "
              "you are satisfied (TEXTBOUND_STORE=local still reads it for this release).")
