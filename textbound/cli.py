"""The `textbound` command line: ingest documents, ask questions, inspect the collection."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from textbound.errors import TextboundError

app = typer.Typer(
    name="textbound",
    help="Answer questions only from your documents, with citations, and refuse with a reason "
    "when they don't say. Settings come from TEXTBOUND_* environment variables or .env "
    "(see README).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)


def _fail(exc: BaseException | str) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}")
    return typer.Exit(code=2)


def _settings(collection: str | None = None, **overrides: Any) -> Any:
    from textbound.settings import Settings

    try:
        values = {k: v for k, v in overrides.items() if v is not None}
        if collection:
            values["collection"] = collection
        return Settings(**values)
    except Exception as exc:  # noqa: BLE001 - pydantic's message names the bad setting
        raise _fail(exc) from exc


@app.command()
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or folders (Markdown, text, HTML, PDF). Default: the bundled "
                       "sample textbook (TEXTBOUND_CORPUS_DIR)."),
    ] = None,
    jsonl: Annotated[
        list[Path] | None,
        typer.Option("--jsonl", help="A benchmark corpus: one {doc_id, title, text} per line."),
    ] = None,
    prune: Annotated[bool, typer.Option(help="Delete chunks of sources not in this run.")] = False,
    collection: Annotated[str | None, typer.Option(help="Collection to write to.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Ingest documents into the collection; unchanged files are skipped.

    Example: textbound ingest corpus/ --prune
    """
    from textbound.embeddings import build_embeddings
    from textbound.ingest import ingest as run_ingest
    from textbound.store import VectorStore

    settings = _settings(collection)
    if not paths and not jsonl:
        paths = [settings.corpus_dir]
    try:
        store = VectorStore.from_settings(settings, build_embeddings(settings))
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total} chunks"), TimeRemainingColumn(),
                      console=err, disable=as_json or not err.is_terminal) as bar:
            task = bar.add_task("embedding", total=None)

            def progress(stage: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            summary = run_ingest(store, paths or [], jsonl=jsonl or [], prune=prune,
                                 batch_size=settings.embedding_batch_size * 4, progress=progress,
                                 sentence_vectors=settings.sentence_vectors)
        chunks_total = store.count()
        store.close()
    except TextboundError as exc:
        raise _fail(exc) from exc
    data = summary.as_dict() | {"collection": settings.collection, "chunks_total": chunks_total}
    if as_json:
        print(json.dumps(data, indent=2))
        return
    t = Table(title=f"Ingested into {settings.collection!r}", show_header=False)
    for k in ("files_seen", "files_changed", "files_unchanged", "chunks_added", "chunks_unchanged",
              "chunks_removed", "chunks_total", "seconds"):
        t.add_row(k.replace("_", " "), str(data[k]))
    console.print(t)
    for f, reason in summary.skipped:
        console.print(f"[yellow]skipped[/] {f}: {reason}")


def _print_response(out: dict[str, Any]) -> None:
    style = "yellow" if out["was_refusal"] else "green"
    title = (f"refused: {out['refusal_reason']}" if out["was_refusal"]
             else f"answer (confidence: {out['confidence_level']})")
    console.print(Panel(Markdown(out["answer"]), title=title, border_style=style))
    for s in out["sources"]:
        where = s["section"] + (f", page {s['page']}" if s.get("page") else "")
        console.print(f"  [{s['citation']}] {s['source']} — {where} "
                      f"(cosine {s['score']:.3f}, chars {s['start']}-{s['end']})")
    d = out["diagnostics"]
    console.print(f"[dim]path: {d['path']} · chunks: {d['chunks_retrieved']} · max cosine: "
                  f"{d['max_score']} · {d['latency_ms']} ms[/]")


def _text(value: str | None) -> str | None:
    """Return an argument as valid Unicode: undecodable bytes become U+FFFD, not a crash.

    Python hands over bytes that are not UTF-8 as lone surrogates (`surrogateescape`), which
    nothing downstream can encode.
    """
    if value is None:
        return None
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        raw = value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def _run(question: str, selected_text: str | None, session_id: str | None,
         context: dict[str, Any], stream: bool) -> dict[str, Any]:
    from graph.app import get_graph

    graph = get_graph()
    payload: dict[str, Any] = {"question": _text(question), "selected_text": _text(selected_text),
                               "session_id": _text(session_id)}
    if not stream:
        return dict(graph.invoke(payload, context=context or None))
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(payload, context=context or None,
                                    stream_mode=["updates", "values"]):
        if mode == "updates":
            for node in chunk:
                err.print(f"[dim]· {node}[/]")
        else:
            final = chunk
    return {k: final[k] for k in ("answer", "was_refusal", "refusal_reason", "sources",
                                  "confidence_level", "suggestions", "diagnostics")}


@app.command()
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
    policy: Annotated[str | None, typer.Option(help="Gate policy for this run.")] = None,
    generator: Annotated[str | None, typer.Option(help="extractive or chat.")] = None,
) -> None:
    """Ask one question; the answer cites its sources or the refusal says why.

    Example: textbound ask "What is a ROS 2 topic?" --json
    """
    context = {k: v for k, v in {"policy": policy, "generator": generator}.items() if v}
    try:
        out = _run(question, selected_text, session_id, context, stream and not as_json)
    except TextboundError as exc:
        raise _fail(exc) from exc
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_response(out)


@app.command()
def stats(collection: Annotated[str | None, typer.Option(help="Collection.")] = None,
          as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the collection: where it lives, its embedding model, chunks and documents.

    Example: textbound stats
    """
    from textbound.embeddings import build_embeddings
    from textbound.store import VectorStore, require_collection

    settings = _settings(collection)
    try:
        store = VectorStore.from_settings(settings, build_embeddings(settings))
        require_collection(store)
        info = store.info()
        toc = store.table_of_contents()
        store.close()
    except TextboundError as exc:
        raise _fail(exc) from exc
    data = {"collection": settings.collection, "location": store.location,
            "embedding_model": info["metadata"].get("embedding_model"),
            "dimension": info["dimension"], "chunks": info["points"], "documents": len(toc),
            "score_scale": "raw cosine [-1, 1]"}
    if as_json:
        print(json.dumps(data | {"table_of_contents": toc}, indent=2))
        return
    t = Table(show_header=False, title="textbound collection")
    for k, v in data.items():
        t.add_row(k.replace("_", " "), str(v))
    console.print(t)
    for doc in toc[:30]:
        n = len(doc["sections"])
        console.print(f"• {doc['title']} [dim]({doc['source']}, {n} sections)[/]")


@app.command()
def demo() -> None:
    """Ingest the bundled textbook and ask sample questions: answers, refusals and a selection.

    Example: textbound demo
    """
    ingest(paths=None, jsonl=None, prune=True, collection=None, as_json=False)
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
    for q, sel in samples:
        note = " [dim](about a selection)" if sel else ""
        console.rule(f"[bold]{q}{note}")
        try:
            _print_response(_run(q, sel, "demo", {}, stream=False))
        except TextboundError as exc:
            raise _fail(exc) from exc


@app.command()
def report(
    audit: Annotated[Path | None, typer.Option(
        help="Audit log to read (default: TEXTBOUND_AUDIT_LOG or <data_dir>/audit.jsonl).")] = None,
    since: Annotated[str | None, typer.Option(
        help="Only responses at or after this UTC date or time, e.g. 2025-01-31.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for report.md, report.html, summary.json and the plots "
             "(default: <data_dir>/report).")] = None,
    top: Annotated[int, typer.Option(min=1, help="Most refused questions to group.")] = 50,
    collection: Annotated[str | None, typer.Option(help="Collection that names topics.")] = None,
) -> None:
    """Report answers vs refusals, refusal reasons, and the topics refused most (coverage gaps).

    Example: textbound report --since 2025-01-01 --out refusal-report/
    """
    from textbound.analytics import build_report, parse_since

    settings = _settings(collection)
    path = audit or settings.audit_log
    if path is None or not Path(path).is_file():
        raise _fail(f"no audit log at {path} (set --audit or TEXTBOUND_AUDIT_LOG)")
    try:
        start = parse_since(since)
    except ValueError as exc:
        raise _fail(exc) from exc
    with Progress(TextColumn("reading"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeRemainingColumn(), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("reading", total=Path(path).stat().st_size or 1)
        result = build_report(Path(path), out or settings.data_dir / "report", since=start,
                              settings=settings, top=top,
                              progress=lambda done, total: bar.update(task, completed=done))
    s = result.summary
    console.print(f"{s.records:,} responses: {s.answers:,} answers, {s.refusals:,} refusals; "
                  f"{s.malformed_total:,} malformed lines skipped"
                  + (f", {s.before_since:,} before --since" if start else ""))
    for g in result.groups[:5]:
        console.print(f"  {g.span():>7} {g.topic} [dim]({g.verdict})[/]")
    console.print(f"report: {result.out_dir / 'report.md'} (and report.html)")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on; 0.0.0.0 exposes it to "
                                      "the network (set TEXTBOUND_API_KEY first).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the graph over HTTP: /chat (LangServe), /healthz and /docs.

    /chat has invoke, batch, stream, stream_events and a playground at /chat/playground/.

    The embedded store allows one process: stop other textbound commands on this data folder.

    Example: textbound serve --port 8000

    Then: curl -s localhost:8000/chat/invoke -d '{"input": {"question": "What is a ROS 2 topic?"}}'
    """
    import uvicorn

    from textbound.server import create_app, uvicorn_config

    settings = _settings()
    try:
        server_app = create_app(settings)
    except TextboundError as exc:
        raise _fail(exc) from exc
    if host not in ("127.0.0.1", "localhost", "::1") and settings.api_key is None:
        err.print(f"[yellow]warning:[/] listening on {host} without TEXTBOUND_API_KEY")
    uvicorn.Server(uvicorn_config(server_app, settings, host=host, port=port,
                                  log_level=log_level)).run()


def _history_table(history: list[tuple[str, dict[str, Any]]]) -> Table:
    t = Table(title="this session")
    for col in ("#", "question", "outcome", "confidence", "sources"):
        t.add_column(col)
    for n, (q, out) in enumerate(history, start=1):
        outcome = f"refused: {out['refusal_reason']}" if out["was_refusal"] else "answered"
        t.add_row(str(n), q, outcome, out["confidence_level"], str(len(out["sources"])))
    return t


@app.command()
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
) -> None:
    """Ask questions one after another; `history` lists them, `exit` or Ctrl-D ends the session.

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
                      "[bold]history[/] to list this session's questions, [bold]exit[/] to quit")
    from graph.builder import build_graph, build_services

    try:
        services = build_services(settings=_settings())
    except TextboundError as exc:
        raise _fail(exc) from exc
    graph = build_graph(services=services)
    history: list[tuple[str, dict[str, Any]]] = []
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        question = _text(line.strip()) or ""
        if not question:
            continue
        if question.lower() in ("exit", "quit", ":q"):
            break
        if question.lower() == "history":
            if as_json:
                print(json.dumps([{"question": q, "was_refusal": o["was_refusal"],
                                   "refusal_reason": o["refusal_reason"]} for q, o in history]))
            elif history:
                console.print(_history_table(history))
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
            _print_response(out)
    services.store.close()
    if history and not as_json:
        console.print(_history_table(history))


from textbound.calibrate import calibrate_command  # noqa: E402
from textbound.evaluation import eval_command  # noqa: E402
from textbound.migrate_store import migrate_store_command  # noqa: E402

app.command(name="eval")(eval_command)
app.command(name="calibrate")(calibrate_command)
app.command(name="migrate-store")(migrate_store_command)


def main() -> None:  # pragma: no cover - console entry point wrapper
    """Run the CLI, turning unexpected errors into one readable line."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
