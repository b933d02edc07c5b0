"""`chat`: questions one after another from standard input, with the session's history."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from textbound.cli._common import console, err, fail
from textbound.cli.answers import answering, print_response
from textbound.cli.feedback import CHAT_COMMANDS, rate_in_chat
from textbound.errors import NotIngestedError, TextboundError
from textbound.text import from_command_line


def _history_table(history: list[tuple[str, dict[str, Any]]]) -> Table:
    t = Table(title="this session")
    for col in ("#", "question", "outcome", "confidence", "sources"):
        t.add_column(col)
    for n, (q, out) in enumerate(history, start=1):
        outcome = f"refused: {out['refusal_reason']}" if out["was_refusal"] else "answered"
        t.add_row(str(n), q, outcome, out["confidence_level"], str(len(out["sources"])))
    return t


def chat(
    session_id: Annotated[
        str | None, typer.Option(help="Session id for the audit log (default: a new one).")
    ] = None,
    selected_text: Annotated[
        str | None,
        typer.Option("--selected-text", help="Answer every question from this passage only."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print each response as one JSON line.")
                       ] = False,
    collection: Annotated[str | None, typer.Option(
        help="Collection to answer from (default: TEXTBOUND_COLLECTION).")] = None,
) -> None:
    """Ask questions one after another; `history` lists them, `exit` or Ctrl-D ends the session.

    `/up`, or `/down` followed by an optional comment, rates the last answer (as `textbound
    feedback` does).

    Questions are read from standard input, one per line, so a file of them can be piped in.

    Each answer cites its sources; each refusal says why.

    Example: textbound chat --session-id study-1
    """
    import uuid

    session = session_id or f"chat-{uuid.uuid4().hex[:12]}"
    interactive = sys.stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401 - arrow-key editing and recall for input()
        except ImportError:  # pragma: no cover - not on every platform
            pass
        console.print(f"[bold]textbound chat[/] · session {session} · type a question, "
                      "[bold]history[/] to list this session's questions, [bold]exit[/] to quit, "
                      f"{escape(CHAT_COMMANDS)}")
    try:
        with answering(collection, own=True) as (graph, services):
            if not services.store.exists():
                raise NotIngestedError(services.settings.collection)
            if interactive:
                console.print(f"[dim]answering from {escape(services.scope.title)} "
                              f"(collection {services.settings.collection!r})[/]")
            history, shown = _converse(graph, session, selected_text, as_json, interactive)
    except TextboundError as exc:
        raise fail(exc) from exc
    if len(history) > shown and not as_json:
        console.print(_history_table(history))


def _converse(graph: Any, session: str, selected_text: str | None, as_json: bool,
              interactive: bool) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """Answer standard input's lines until `exit` or their end.

    Returns the history and how many of its questions `history` listed already (the closing
    table does not repeat them).
    """
    history: list[tuple[str, dict[str, Any]]] = []
    shown = 0
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        question = from_command_line(line.strip()) or ""
        if not question:
            continue
        if question.lower() in ("exit", "quit", ":q"):
            break
        if rate_in_chat(question, history[-1][1] if history else None, as_json=as_json):
            continue
        if question.lower() == "history":
            if as_json:
                print(json.dumps([{"question": q, "was_refusal": o["was_refusal"],
                                   "refusal_reason": o["refusal_reason"]} for q, o in history]))
            elif history:
                console.print(_history_table(history))
                shown = len(history)
            else:
                console.print("[dim]no questions yet[/]")
            continue
        try:
            out = dict(graph.invoke({"question": question, "selected_text": selected_text,
                                     "session_id": session}))
        except TextboundError as exc:
            err.print(f"[bold red]error:[/] {exc}")
            continue
        history.append((question, out))
        if as_json:
            print(json.dumps(out, ensure_ascii=False), flush=True)
        else:
            console.rule(f"[bold]{question}")
            print_response(out)
    return history, shown
