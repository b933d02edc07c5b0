"""`feedback`: rate a response by its run id; and `/up`, `/down` in `textbound chat`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

import typer
from rich.markup import escape

from textbound.errors import TextboundError
from textbound.serving.cli._common import console, err, fail, get_settings
from textbound.settings import Settings
from textbound.text import from_command_line

CHAT_COMMANDS = "/up or /down [comment] to rate the last answer"
"""How `textbound chat` lists its rating commands."""


def _store_passages(settings: Settings) -> Any:
    """Return a passage lookup that opens the store for one read, or finds nothing if it can't.

    While a server runs, the embedded store is its own: the rating is then kept with the
    passages' places from the audit line and thread, without their text.
    """
    from textbound.documents.store import opened_store

    def lookup(chunk_ids: list[str]) -> Mapping[str, Mapping[str, Any]]:
        from textbound.records.feedback import store_passages

        try:
            with opened_store(settings, None) as store:  # type: ignore[arg-type]
                return store_passages(store)(chunk_ids)
        except TextboundError:
            return {}

    return lookup


def _kept_turns(settings: Settings) -> Any:
    """Return a thread history lookup over the conversations the settings keep (read only).

    The checkpointer is opened for one read: SQLite (the default) and Postgres let a server
    keep writing meanwhile. With conversations off, or one that cannot be opened, the rating is
    kept without the answer's text.
    """
    def lookup(thread_id: str) -> list[dict[str, Any]]:
        from textbound.conversation.threads import opened_checkpointer, saved_turns

        try:
            with opened_checkpointer(settings) as saver:
                return saved_turns(saver, thread_id) if saver is not None else []
        except TextboundError:
            return []

    return lookup


def _said(record: Mapping[str, Any]) -> str:
    again = " (replaces your earlier rating)" if record.get("replaces_earlier") else ""
    what = (f"refusal ({record.get('refusal_reason')})" if record.get("was_refusal")
            else "answer")
    question = str(record.get("asked_question") or record.get("question") or "")
    return (f"rated {record['rating']}{again}: the {what} to {question[:80]!r} "
            f"(run {record['run_id']})")


def feedback(
    run_id: Annotated[str, typer.Argument(
        help="The run_id of the response you rate (`textbound ask --json` prints it).")],
    rating: Annotated[str, typer.Argument(
        help="up (right and useful) or down (wrong, or a refusal it should not have been).",
        metavar="up|down")],
    comment: Annotated[str | None, typer.Option(
        help="What is wrong or missing (at most 1000 characters).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored rating as JSON.")
                       ] = False,
    course: Annotated[str | None, typer.Option(help=(
        "The course that gave the response, when one server serves several "
        "(TEXTBOUND_COURSES); default: TEXTBOUND_COLLECTION's."))] = None,
) -> None:
    """Rate a response up or down; `textbound report` lists the answers students marked wrong.

    The run id is looked up in the audit log; the rating is kept beside it (feedback.jsonl)
    with the question, the answer and the cited passages. Rating a run again: the latest wins.
    With LangSmith tracing on, the rating also goes to LangSmith as feedback on that run.

    Exit codes: 0 stored; 2 a bad rating or run id, or a run the audit log does not hold.

    Example: textbound feedback 1f0c9a3e-5b7d-4c1e-9a2b-3c4d5e6f7a8b down --comment "it is .srv"
    """
    from textbound.records.courses import course_of
    from textbound.records.feedback import rate_run
    from textbound.records.shared import records_of

    try:
        chosen = course_of(get_settings(), course)
        settings = chosen.settings
        record = rate_run(records_of(settings), from_command_line(run_id), rating,
                          from_command_line(comment), turns=_kept_turns(settings),
                          passages=_store_passages(settings))
    except TextboundError as exc:
        raise fail(exc) from exc
    if as_json:
        print(json.dumps(record, ensure_ascii=False))
    else:
        console.print(escape(_said(record)))


def rate_in_chat(line: str, last: Mapping[str, Any] | None, *, as_json: bool = False) -> bool:
    """Rate the chat's last response if `line` is `/up` or `/down [comment]`; return if it was.

    The chat's own response fills in the passages' places the audit line lacks: it is this
    process's, not a client's.
    """
    command, _, comment = line.strip().partition(" ")
    if command.lower() not in ("/up", "/down"):
        return False
    if last is None or not last.get("run_id"):
        err.print("[yellow]nothing to rate yet:[/] ask a question first, then /up or /down")
        return True
    from textbound.records.feedback import rate_run
    from textbound.records.shared import records_of

    try:
        record = rate_run(records_of(get_settings()), last["run_id"], command[1:],
                          comment.strip() or None, response=last)
    except (TextboundError, typer.Exit) as exc:
        if not isinstance(exc, typer.Exit):  # get_settings has printed its own line
            err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return True
    if as_json:
        print(json.dumps({"feedback": record}, ensure_ascii=False), flush=True)
    else:
        console.print(f"[dim]{escape(_said(record))}[/]")
    return True
