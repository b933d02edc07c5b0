"""The answering commands: `ask` one question, and the `demo` over the bundled textbook."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel

from textbound.conversation.threads import turn_guard, turn_options
from textbound.errors import TextboundError
from textbound.serving.cli._common import (
    EXIT_NOT_INGESTED,
    EXIT_REFUSED,
    choices,
    console,
    err,
    fail,
    get_settings,
)
from textbound.serving.cli._through_server import ask_server, server_of
from textbound.serving.cli.documents import ingest
from textbound.text import from_command_line


def print_response(out: dict[str, Any]) -> None:
    """Print an answer or refusal as a panel, its sources, and a line of diagnostics."""
    style = "yellow" if out["was_refusal"] else "green"
    title = (f"refused: {out['refusal_reason']}" if out["was_refusal"]
             else f"answer (confidence: {out['confidence_level']})")
    console.print(Panel(Markdown(out["answer"]), title=title, border_style=style))
    for s in out["sources"]:
        page = s.get("page_label") or s.get("page")  # the printed page, else the file's
        where = s["section"] + (f", page {page}" if page else "")
        console.print(f"  [{s['citation']}] {s['source']} — {where} "
                      f"(cosine {s['score']:.3f}, chars {s['start']}-{s['end']})")
    d = out["diagnostics"]
    conversation = d.get("conversation") or {}
    if conversation.get("rewritten"):
        console.print(f"[dim]understood as: {escape(str(conversation['standalone']))}[/]")
    console.print(f"[dim]path: {d['path']} · chunks: {d['chunks_retrieved']} · max cosine: "
                  f"{d['max_score']} · {d['latency_ms']} ms · run {out.get('run_id')}[/]")


@contextmanager
def answering(collection: str | None = None, *, own: bool = False,
              audit_log: Path | None = None) -> Iterator[tuple[Any, Any]]:
    """Yield (graph, services) to answer with; the one place a command builds and closes them.

    Without a collection (and unless `own`), the process-wide graph: its services are None here
    and closed at exit. Otherwise a graph over services of its own, whose store is closed when
    the block ends, however it ends, which releases the embedded store's lock. `audit_log`
    replaces the settings' audit log for this graph (the demo keeps its own).
    """
    if collection is None and not own:
        from graph.app import get_graph

        yield get_graph(), None
        return
    from graph.builder import build_graph, build_services
    from textbound.conversation.threads import open_checkpointer

    services = build_services(settings=get_settings(collection, audit_log=audit_log))
    checkpointer = None
    try:
        checkpointer = open_checkpointer(services.settings)
        yield build_graph(services=services, checkpointer=checkpointer), services
    finally:
        services.store.close()
        if checkpointer is not None and hasattr(checkpointer, "close"):
            checkpointer.close()


def run_question(question: str, selected_text: str | None, session_id: str | None,
                 context: dict[str, Any], stream: bool, graph: Any,
                 thread_id: str | None = None) -> dict[str, Any]:
    """Answer one question with the graph, printing each step to stderr when `stream`.

    With `thread_id`, the question continues that conversation (a follow-up is read with its
    earlier turns).
    """
    payload: dict[str, Any] = {"question": from_command_line(question),
                               "selected_text": from_command_line(selected_text),
                               "session_id": from_command_line(session_id)}
    config = {"configurable": {"thread_id": thread_id}} if thread_id else None
    # on PostgreSQL a server's turns of this thread wait for this one, and it for theirs
    with turn_guard(graph, thread_id):
        if not stream:
            return dict(graph.invoke(payload, config, context=context or None,
                                     **turn_options(graph)))
        final: dict[str, Any] = {}
        for mode, chunk in graph.stream(payload, config, context=context or None,
                                        stream_mode=["updates", "values"],
                                        **turn_options(graph)):
            if mode == "updates":
                for node in chunk:
                    err.print(f"[dim]· {node}[/]")
            else:
                final = chunk
    return {k: final[k] for k in ("answer", "was_refusal", "refusal_reason", "sources",
                                  "confidence_level", "suggestions", "diagnostics", "run_id")}


def ask(
    question: Annotated[str, typer.Argument(help="The question, in quotes.")],
    selected_text: Annotated[
        str | None,
        typer.Option("--selected-text", help="Answer only from this passage (no search)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the response contract.")
                       ] = False,
    stream: Annotated[bool, typer.Option(help="Show each step as it runs.")] = False,
    session_id: Annotated[str | None, typer.Option(help="Session id for the audit log.")] = None,
    thread: Annotated[str | None, typer.Option(
        "--thread", help="Continue this conversation: a follow-up (\"what file defines its "
        "interface?\") is read with the thread's earlier questions. Any id of 1-128 letters, "
        "digits, '_', '-', '.', ':'; a new id starts a new conversation.")] = None,
    policy: Annotated[str | None, typer.Option(
        help="Gate policy for this run: calibrated, seed_000, seed_002 or seed_004.",
        callback=choices("policy"))] = None,
    generator: Annotated[str | None, typer.Option(
        help="extractive or chat.", callback=choices("generator"))] = None,
    collection: Annotated[str | None, typer.Option(
        help="Collection to answer from (default: TEXTBOUND_COLLECTION).")] = None,
    fail_on_refusal: Annotated[bool, typer.Option(
        "--fail-on-refusal", help=f"Exit {EXIT_REFUSED} when the question is refused, so a "
        "script need not parse --json.")] = False,
) -> None:
    """Ask one question; the answer cites its sources or the refusal says why.

    While `textbound serve` runs on the collection, the question goes to that server (with
    TEXTBOUND_API_KEY), which holds the embedded store; --stream then shows no steps.

    Exit codes: 0 answered (or refused, without --fail-on-refusal); 2 a bad option, setting or
    setup; 3 refused, with --fail-on-refusal; 4 nothing ingested yet (run textbound ingest PATH).

    Example: textbound ask "What is a ROS 2 topic?" --json

    Example: textbound ask --thread study-1 "What does a ROS 2 service do?"; then
    textbound ask --thread study-1 "What file defines its interface?"
    """
    context = {k: v for k, v in {"policy": policy, "generator": generator}.items() if v}
    try:
        if thread is not None:
            check_thread(thread)
        server = server_of(collection)
        if server is not None:  # it holds the collection: ask it
            out = ask_server(*server, {"question": from_command_line(question),
                                       "selected_text": from_command_line(selected_text),
                                       "session_id": from_command_line(session_id)},
                             thread, context)
        else:
            with answering(collection) as (graph, _services):
                out = run_question(question, selected_text, session_id, context,
                                   stream and not as_json, graph=graph, thread_id=thread)
    except TextboundError as exc:
        raise fail(exc) from exc
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print_response(out)
    _exit_for(out, fail_on_refusal)


def check_thread(thread_id: str) -> str:
    """Return a valid thread id, or raise a usage error that says the rule."""
    from textbound.conversation.threads import ThreadIdError, validate_thread_id

    try:
        return validate_thread_id(thread_id)
    except ThreadIdError as exc:
        raise typer.BadParameter(str(exc), param_hint="--thread") from exc


def _exit_for(out: dict[str, Any], fail_on_refusal: bool) -> None:
    """Exit 4 when nothing is ingested, 3 on a refusal when asked to; else return."""
    if (out["diagnostics"] or {}).get("error_kind") == "not_ingested":
        err.print("[bold red]error:[/] " + escape(str(out["diagnostics"].get("error"))))
        raise typer.Exit(EXIT_NOT_INGESTED)
    if fail_on_refusal and out["was_refusal"]:
        raise typer.Exit(EXIT_REFUSED)


DEMO_COLLECTION = "demo"
"""The demo's own collection: `make run` never writes to, or prunes, the one users fill."""
DEMO_AUDIT_LOG = Path("demo") / "audit.jsonl"
"""The demo's own audit log, under the data folder: its questions never reach a course's report
(nor its ratings, which are kept beside it)."""


def demo_audit_log(settings: Any) -> Path | None:
    """Return where the demo logs its answers: its own file, or None when auditing is off."""
    return Path(settings.data_dir) / DEMO_AUDIT_LOG if settings.audit_enabled else None


def demo() -> None:
    """Ingest the bundled textbook into its own collection and ask sample questions.

    The demo writes only to the collection "demo", so documents you ingested (into
    TEXTBOUND_COLLECTION, "textbook" by default) are never changed or removed, and logs its
    answers in <data_dir>/demo/audit.jsonl, never in the course's audit log.

    Example: textbound demo
    """
    ingest(paths=None, jsonl=None, prune=True, collection=DEMO_COLLECTION, as_json=False)
    samples: list[tuple[str, str | None]] = [
        ("What is a ROS 2 topic?", None),
        ("Why do ROS messages use quaternions instead of Euler angles?", None),
        ("What is the capital of France?", None),
        ("How do I tune a PID controller for my robot arm?", None),
        # retrieves ROS 2 passages well, but the book never mentions Windows
        ("Can I use ROS 2 on Windows?", None),
        ("What does the passage say a topic is?",
         "A topic is a named bus over which nodes exchange messages. Topics implement the "
         "publish-subscribe pattern."),
        ("Who invented the transistor?",
         "A topic is a named bus over which nodes exchange messages."),
    ]
    try:
        audit = demo_audit_log(get_settings(DEMO_COLLECTION))
        with answering(DEMO_COLLECTION, audit_log=audit) as (graph, _services):
            for q, sel in samples:
                note = " [dim](about a selection)" if sel else ""
                console.rule(f"[bold]{q}{note}")
                print_response(run_question(q, sel, "demo", {}, stream=False, graph=graph))
    except TextboundError as exc:
        raise fail(exc) from exc
    logged = f" and its own audit log ({escape(str(audit))})" if audit is not None else ""
    console.print(f"\nThe demo used its own collection {DEMO_COLLECTION!r}{logged}; ask it "
                  f"more with [bold]textbound ask --collection {DEMO_COLLECTION} \"...\"[/]. "
                  "For your own documents: [bold]textbound ingest PATH[/], then "
                  "[bold]textbound ask \"...\"[/].")

