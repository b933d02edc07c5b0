"""`chat`: a conversation from standard input; `threads`: show or forget a conversation."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from textbound.conversation.threads import turn_options
from textbound.errors import ConfigError, NotIngestedError, TextboundError
from textbound.records.record_store import RecordStore
from textbound.records.shared import records_of
from textbound.serving.cli._common import console, err, fail
from textbound.serving.cli.answers import answering, check_thread, print_response
from textbound.serving.cli.feedback import CHAT_COMMANDS, rate_in_chat
from textbound.text import from_command_line

__all__ = ["chat", "threads_app"]

_COMMANDS = ("[bold]history[/] lists this conversation, [bold]new[/] starts another, "
             "[bold]forget[/] deletes this one and starts another, [bold]exit[/] quits")


def _turns_table(turns: list[dict[str, Any]], thread_id: str) -> Table:
    t = Table(title=f"conversation {thread_id}")
    for col in ("#", "question", "understood as", "outcome", "sources"):
        t.add_column(col)
    for n, turn in enumerate(turns, start=1):
        outcome = f"refused: {turn['refusal_reason']}" if turn["was_refusal"] else "answered"
        understood = turn["standalone"] if turn["standalone"] != turn["question"] else ""
        t.add_row(str(n), turn["question"], understood, outcome, str(len(turn["sources"])))
    return t


def _new_thread() -> str:
    import uuid

    return f"chat-{uuid.uuid4().hex[:12]}"


def chat(
    thread: Annotated[str | None, typer.Option(
        "--thread", help="Continue this conversation (it is kept in the data folder, so "
        "`textbound chat --thread ID` picks it up again later); default: a new one, whose id "
        "is printed.")] = None,
    session_id: Annotated[
        str | None, typer.Option(help="Session id for the audit log (default: the thread id).")
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
    """Ask questions one after another, as a conversation: follow-ups keep their context.

    "What does a ROS 2 service do?" then "What file defines its interface?" reads "its" as the
    service, and "why?", "and a topic?" or "give me an example" continue the last question.
    Each answer cites its sources; each refusal says why. Questions are read from standard
    input, one per line, so a file of them can be piped in. Type `history` to list the
    conversation, `new` to start another, `forget` to delete it, `exit` (or Ctrl-D) to quit.
    Conversations are kept as TEXTBOUND_CHECKPOINTER says (SQLite in the data folder by
    default; `off` makes every question stand alone). `/up`, or `/down` followed by an
    optional comment, rates the last answer (as `textbound feedback` does).

    Example: textbound chat --thread study-1
    """
    thread_id = check_thread(thread) if thread is not None else _new_thread()
    interactive = sys.stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401 - arrow-key editing and recall for input()
        except ImportError:  # pragma: no cover - not on every platform
            pass
    try:
        with answering(collection, own=True) as (graph, services):
            if not services.store.exists():
                raise NotIngestedError(services.settings.collection)
            keeps = getattr(graph, "checkpointer", None) is not None
            if interactive:
                kept = (f"conversation {thread_id}" if keeps
                        else "conversations off (TEXTBOUND_CHECKPOINTER=off)")
                console.print(f"[bold]textbound chat[/] · {kept} · type a question; {_COMMANDS}; "
                              f"{escape(CHAT_COMMANDS)}")
                console.print(f"[dim]answering from {escape(services.scope.title)} "
                              f"(collection {services.settings.collection!r})[/]")
            thread_id = _converse(graph, thread_id if keeps else None, session_id,
                                  selected_text, as_json, interactive,
                                  records_of(services.settings)) or thread_id
    except TextboundError as exc:
        raise fail(exc) from exc
    if interactive and not as_json:
        console.print(f"[dim]continue later with: textbound chat --thread {thread_id}[/]")


def _converse(graph: Any, thread_id: str | None, session_id: str | None,
              selected_text: str | None, as_json: bool, interactive: bool,
              audit_log: Path | RecordStore | None = None) -> str | None:
    """Answer standard input's lines until `exit` or their end; return the thread in use.

    `forget` deletes the conversation's turns and its lines in `audit_log` and the feedback
    log beside it.
    """
    from textbound.conversation.threads import delete_thread, thread_turns
    from textbound.records.feedback import forget_thread_records

    last: dict[str, Any] | None = None  # the response /up and /down rate
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        question = from_command_line(line.strip()) or ""
        if not question:
            continue
        command = question.lower()
        if command in ("exit", "quit", ":q"):
            break
        if rate_in_chat(question, last, as_json=as_json):
            continue
        if command in ("history", "new", "forget"):
            if thread_id is None:
                err.print("conversations are off (TEXTBOUND_CHECKPOINTER=off): every question "
                          "stands alone")
                continue
            if command == "history":
                turns = thread_turns(graph, thread_id)
                if as_json:
                    print(json.dumps({"thread_id": thread_id, "turns": turns},
                                     ensure_ascii=False), flush=True)
                elif turns:
                    console.print(_turns_table(turns, thread_id))
                else:
                    console.print("[dim]no questions yet[/]")
                continue
            if command == "forget":
                delete_thread(graph, thread_id)
                forget_thread_records(audit_log, thread_id)
                err.print(f"conversation {thread_id} deleted")
            thread_id = _new_thread()
            err.print(f"new conversation {thread_id}")
            continue
        config = {"configurable": {"thread_id": thread_id}} if thread_id else None
        try:
            out = dict(graph.invoke({"question": question, "selected_text": selected_text,
                                     "session_id": session_id or thread_id}, config,
                                    **turn_options(graph)))
        except TextboundError as exc:
            err.print(f"[bold red]error:[/] {exc}")
            continue
        last = out
        if as_json:
            print(json.dumps(out, ensure_ascii=False), flush=True)
        else:
            console.rule(f"[bold]{escape(question)}")
            print_response(out)
    return thread_id


threads_app = typer.Typer(
    name="threads",
    help="Show or delete a conversation kept by `textbound chat --thread`, `ask --thread`, "
    "the reader page or HTTP (config.configurable.thread_id).",
    no_args_is_help=True,
)


_COURSE_HELP = ("The course the conversation is of, when one server serves several "
                "(TEXTBOUND_COURSES); default: TEXTBOUND_COLLECTION's.")


def _settings_of(collection: str | None, course: str | None) -> Any:
    """Return the settings of the course (else of the collection, as without courses)."""
    from textbound.records.courses import course_of
    from textbound.serving.cli._common import get_settings

    if course is None:
        return get_settings(collection)
    return course_of(get_settings(), course).settings


@contextmanager
def _kept_threads(collection: str | None, course: str | None = None) -> Iterator[Any]:
    """Yield the conversations' checkpointer alone: no graph, store or model to load."""
    from textbound.conversation.threads import opened_checkpointer

    with opened_checkpointer(_settings_of(collection, course)) as saver:
        if saver is None:
            raise ConfigError("this graph keeps no conversations (TEXTBOUND_CHECKPOINTER=off)")
        yield saver


@threads_app.command("show")
def show_thread(
    thread_id: Annotated[str, typer.Argument(help="The conversation's id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the turns as JSON.")] = False,
    collection: Annotated[str | None, typer.Option(
        help="Collection (default: TEXTBOUND_COLLECTION).")] = None,
    course: Annotated[str | None, typer.Option(help=_COURSE_HELP)] = None,
) -> None:
    """List a conversation's questions, how each was understood, and its outcome."""
    from textbound.conversation.threads import saved_turns

    check_thread(thread_id)
    try:
        with _kept_threads(collection, course) as saver:
            turns = saved_turns(saver, thread_id)
    except TextboundError as exc:
        raise fail(exc) from exc
    if as_json:
        print(json.dumps({"thread_id": thread_id, "turns": turns}, indent=2, ensure_ascii=False))
    elif turns:
        console.print(_turns_table(turns, thread_id))
    else:
        console.print(f"no conversation {thread_id!r} (nothing asked in it yet)")


@threads_app.command("delete")
def delete_thread_command(
    thread_id: Annotated[str, typer.Argument(help="The conversation's id.")],
    collection: Annotated[str | None, typer.Option(
        help="Collection (default: TEXTBOUND_COLLECTION).")] = None,
    course: Annotated[str | None, typer.Option(help=_COURSE_HELP)] = None,
) -> None:
    """Delete a conversation: its turns, its audit and feedback lines, and its owner.

    As `DELETE /threads/{id}` does; its id may then start a new conversation.
    """
    from textbound.records.courses import course_for
    from textbound.records.feedback import forget_thread_records
    from textbound.records.keys import open_keys

    check_thread(thread_id)
    try:
        settings = _settings_of(collection, course)
        with _kept_threads(collection, course) as saver:
            saver.delete_thread(thread_id)
        forget_thread_records(records_of(settings), thread_id)
        keys = open_keys(settings)
        try:
            course_for(settings).keys(keys).forget(thread_id)
        finally:
            keys.close()
    except TextboundError as exc:
        raise fail(exc) from exc
    console.print(f"conversation {thread_id} deleted")
