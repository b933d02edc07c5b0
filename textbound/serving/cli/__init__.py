"""The `textbound` command line: ingest documents, ask questions, inspect the collection.

One module per command group, each registering nothing itself; the commands are added to the
Typer app here, in the order `textbound --help` lists them:

* `documents`: ingest (`upload` hands files to a running server instead), stats, init;
* `answers`: ask, demo (and `answering`, the one place a command builds and closes a graph);
* `session`: chat, and threads (show or delete a conversation);
* `feedback`: feedback (a student's rating of a response; `/up` and `/down` in chat);
* `operations`: report, serve;
* `keys`: create, list and revoke access keys (textbound/records/keys.py);
* `model`: serve, stop, status and env of a local chat model (textbound/providers/local_model.py);
* eval, calibrate and migrate-store live with their applications.
"""

from __future__ import annotations

import os
import sys

from textbound.quality.calibrate import calibrate_command
from textbound.quality.evaluation import eval_command
from textbound.serving.cli._common import (
    EXIT_ANSWERED,
    EXIT_NOT_INGESTED,
    EXIT_REFUSED,
    EXIT_USAGE,
    app,
    console,
    err,
)
from textbound.serving.cli.answers import DEMO_COLLECTION, ask, demo
from textbound.serving.cli.documents import ingest, init, stats
from textbound.serving.cli.feedback import feedback
from textbound.serving.cli.keys import keys_app
from textbound.serving.cli.model import model_app
from textbound.serving.cli.operations import report, serve
from textbound.serving.cli.session import chat, threads_app
from textbound.serving.migrate_store import migrate_store_command

__all__ = ["DEMO_COLLECTION", "EXIT_ANSWERED", "EXIT_NOT_INGESTED", "EXIT_REFUSED", "EXIT_USAGE",
           "app", "ask", "chat", "console", "demo", "err", "feedback", "ingest", "init", "main",
           "report", "serve", "stats"]

for _command in (ingest, ask, stats, init, demo, report, serve, chat, feedback):
    app.command()(_command)
app.command(name="eval")(eval_command)
app.command(name="calibrate")(calibrate_command)
app.command(name="migrate-store")(migrate_store_command)
app.add_typer(model_app, name="model")
app.add_typer(threads_app, name="threads")
app.add_typer(keys_app, name="keys")


def main() -> None:  # pragma: no cover - console entry point wrapper
    """Run the CLI, turning unexpected errors into one readable line."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
