"""The `textbound` command line: ingest documents, ask questions, inspect the collection."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from textbound.errors import NotIngestedError, StoreInUseError, TextboundError

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
    "(see README).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)


def _fail(exc: BaseException | str) -> typer.Exit:
    err.print("[bold red]error:[/] " + escape(str(exc)))
    code = EXIT_NOT_INGESTED if isinstance(exc, NotIngestedError) else EXIT_USAGE
    return typer.Exit(code=code)


def _settings(collection: str | None = None, **overrides: Any) -> Any:
    from textbound.settings import load_settings

    values = {k: v for k, v in overrides.items() if v is not None}
    if collection:
        values["collection"] = collection
    try:
        return load_settings(**values)
    except TextboundError as exc:  # one line naming the variable and what it allows
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
    prune: Annotated[bool, typer.Option(
        help="Remove documents that were ingested from under these paths and are gone now "
             "(documents from anywhere else are kept).")] = False,
    collection: Annotated[str | None, typer.Option(help="Collection to write to.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    server: Annotated[str | None, typer.Option(
        help="Hand the files to a running `textbound serve` at this URL (e.g. "
             "http://127.0.0.1:8000), which keeps and ingests them; its TEXTBOUND_API_KEY is "
             "read from your settings.")] = None,
) -> None:
    """Ingest documents into the collection; unchanged files are skipped.

    While `textbound serve` holds the collection, add files through it with --server.

    Example: textbound ingest corpus/ --prune
    """
    from textbound.embeddings import build_embeddings
    from textbound.ingest import ingest as run_ingest
    from textbound.store import VectorStore

    settings = _settings(collection)
    if not paths and not jsonl:
        paths = [settings.corpus_dir]
    missing = [str(p) for p in [*(paths or []), *(jsonl or [])] if not p.exists()]
    if missing:
        raise _fail(f"no such file or folder: {', '.join(missing)}")
    if server:
        if jsonl or prune or collection:
            raise _fail("--server uploads files to the collection the server serves; --jsonl, "
                        "--prune and --collection do not apply")
        _ingest_on_server(server, paths or [], settings, as_json)
        return
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
    except StoreInUseError as exc:
        given = " ".join(map(str, paths or []))
        raise _fail(f"{exc}\nIf that process is `textbound serve`, hand the files to it "
                    f"instead: textbound ingest --server http://127.0.0.1:8000 {given} (your "
                    "server's address; it keeps the files and ingests them, and needs "
                    "TEXTBOUND_API_KEY; see docs/own-textbook.md)") from exc
    except TextboundError as exc:
        raise _fail(exc) from exc
    data = summary.as_dict() | {"collection": settings.collection, "chunks_total": chunks_total}
    given = ", ".join(map(str, [*(paths or []), *(jsonl or [])]))
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        t = Table(title=f"Ingested into {settings.collection!r}", show_header=False)
        for k in ("files_seen", "files_changed", "files_unchanged", "chunks_added",
                  "chunks_unchanged", "chunks_removed", "chunks_total", "seconds"):
            t.add_row(k.replace("_", " "), str(data[k]))
        console.print(t)
        for f, reason in summary.skipped:
            console.print(f"[yellow]skipped[/] {escape(f)}: {escape(reason)}")
        for source, n in summary.pruned:
            console.print(f"[yellow]removed[/] {escape(source)} ({n} chunks): no longer under "
                          f"{escape(given)}")
    if summary.chunks_added + summary.chunks_unchanged == 0:
        # an empty folder, or one of unreadable files, is a mistake worth a non-zero exit
        raise _fail(f"nothing to ingest in {given}: no readable Markdown, text, HTML or PDF "
                    "files" + (" (each skipped file is listed with its reason)"
                               if summary.skipped else ""))


def _files_for_server(paths: list[Path]) -> list[Path]:
    """Return the files to upload: each file given, and the readable files under each folder."""
    from textbound.ingest import discover

    files = [f for f, _ in discover(paths) if isinstance(f, Path)]
    names = [f.name for f in files]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise _fail("the server keeps each file under its own name, and these names repeat: "
                    + ", ".join(repeated) + "; rename them or upload them one at a time")
    return files


def _ingest_on_server(url: str, paths: list[Path], settings: Any, as_json: bool) -> None:
    """Upload each file to PUT /api/documents/NAME and follow its job until it ends."""
    import time
    from urllib.parse import quote

    import httpx

    files = _files_for_server(paths)
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    results: list[dict[str, Any]] = []
    try:
        with httpx.Client(base_url=url.rstrip("/"), timeout=60,
                          headers={"X-API-Key": key} if key else {}) as client:
            for file in files:
                r = client.put(f"/api/documents/{quote(file.name)}", content=file.read_bytes())
                if r.status_code != 202:
                    try:
                        reason = str(r.json().get("detail"))
                    except ValueError:
                        reason = r.text[:300]
                    if r.status_code == 401:
                        reason += " (set TEXTBOUND_API_KEY to the server's key)"
                    results.append({"file": str(file), "status": "rejected",
                                    "http_status": r.status_code, "reason": reason})
                    continue
                job = r.json()
                while job["status"] in ("queued", "running"):
                    if not as_json and job.get("total"):
                        err.print(f"[dim]{escape(file.name)}: {job['done']}/{job['total']} "
                                  "passages embedded[/]")
                    time.sleep(0.5)
                    job = client.get(job["status_url"]).raise_for_status().json()
                results.append({"file": str(file), **job})
    except httpx.HTTPError as exc:
        raise _fail(f"cannot reach the textbound server at {url}: {exc}") from exc
    if as_json:
        print(json.dumps(results, indent=2))
    for res in results if not as_json else ():
        summary = res.get("summary") or {}
        if res["status"] == "done":
            console.print(f"[green]ingested[/] {escape(res['file'])} as {escape(res['source'])}: "
                          f"{summary.get('chunks_added', 0)} passages added, "
                          f"{summary.get('chunks_unchanged', 0)} unchanged, "
                          f"{summary.get('chunks_removed', 0)} removed")
        else:
            why = res.get("reason") or res.get("error") or ""
            console.print(f"[yellow]{res['status']}[/] {escape(res['file'])}: {escape(why)}")
    if not any(res["status"] == "done" for res in results):
        raise _fail(f"nothing was ingested by the server at {url}"
                    + (" (each file is listed with its reason)" if results else
                       ": no readable Markdown, text, HTML or PDF files"))


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


def _graph(collection: str | None = None) -> tuple[Any, Any]:
    """Return the process-wide graph, or one over another collection with its services.

    The services are None for the process-wide graph (closed at exit); otherwise the caller
    closes their store, which releases the embedded store's lock.
    """
    if collection is None:
        from graph.app import get_graph

        return get_graph(), None
    from graph.builder import build_graph, build_services

    services = build_services(settings=_settings(collection))
    return build_graph(services=services), services


def _run(question: str, selected_text: str | None, session_id: str | None,
         context: dict[str, Any], stream: bool, graph: Any = None) -> dict[str, Any]:
    graph = graph if graph is not None else _graph()[0]
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


def _choices(setting: str) -> Callable[[str | None], str | None]:
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
    policy: Annotated[str | None, typer.Option(
        help="Gate policy for this run: calibrated, seed_000, seed_002 or seed_004.",
        callback=_choices("policy"))] = None,
    generator: Annotated[str | None, typer.Option(
        help="extractive or chat.", callback=_choices("generator"))] = None,
    collection: Annotated[str | None, typer.Option(
        help="Collection to answer from (default: TEXTBOUND_COLLECTION).")] = None,
    fail_on_refusal: Annotated[bool, typer.Option(
        "--fail-on-refusal", help=f"Exit {EXIT_REFUSED} when the question is refused, so a "
        "script need not parse --json.")] = False,
) -> None:
    """Ask one question; the answer cites its sources or the refusal says why.

    Exit codes: 0 answered (or refused, without --fail-on-refusal); 2 a bad option, setting or
    setup; 3 refused, with --fail-on-refusal; 4 nothing ingested yet (run textbound ingest PATH).

    Example: textbound ask "What is a ROS 2 topic?" --json
    """
    context = {k: v for k, v in {"policy": policy, "generator": generator}.items() if v}
    services = None
    try:
        graph, services = _graph(collection)
        out = _run(question, selected_text, session_id, context, stream and not as_json,
                   graph=graph)
    except TextboundError as exc:
        raise _fail(exc) from exc
    finally:
        if services is not None:
            services.store.close()
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_response(out)
    _exit_for(out, fail_on_refusal)


def _exit_for(out: dict[str, Any], fail_on_refusal: bool) -> None:
    """Exit 4 when nothing is ingested, 3 on a refusal when asked to; else return."""
    if (out["diagnostics"] or {}).get("error_kind") == "not_ingested":
        err.print("[bold red]error:[/] " + escape(str(out["diagnostics"].get("error"))))
        raise typer.Exit(EXIT_NOT_INGESTED)
    if fail_on_refusal and out["was_refusal"]:
        raise typer.Exit(EXIT_REFUSED)


@app.command()
def stats(collection: Annotated[str | None, typer.Option(help="Collection.")] = None,
          as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the collection: where it lives, its embedding model, chunks and documents.

    Example: textbound stats
    """
    from textbound.embeddings import build_embeddings
    from textbound.store import VectorStore

    settings = _settings(collection)
    try:
        store = VectorStore.from_settings(settings, build_embeddings(settings))
        if not store.exists():
            store.close()
            raise NotIngestedError(settings.collection)
        info = store.info()
        toc = store.table_of_contents()
        store.close()
        profile = _profile(settings, toc)
    except TextboundError as exc:
        raise _fail(exc) from exc
    data = {"collection": settings.collection, "location": store.location,
            "embedding_model": info["metadata"].get("embedding_model"),
            "dimension": info["dimension"], "chunks": info["points"], "documents": len(toc),
            "score_scale": "raw cosine [-1, 1]", "course": profile.title,
            "profile": profile.origin}
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


def _profile(settings: Any, toc: list[dict[str, Any]]) -> Any:
    """Return the course profile in force for the settings' collection, given its documents."""
    from textbound.profile import ProfileResolver

    return ProfileResolver(settings, settings.collection, lambda: toc).current()


@app.command()
def init(
    title: Annotated[str, typer.Option(
        "--title", help="The course's name, as students should read it.")],
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Documents to ingest first (files or folders). Without, the profile is drafted "
             "from what the collection already holds.")] = None,
    collection: Annotated[str | None, typer.Option(
        help="Collection the profile is for (default: TEXTBOUND_COLLECTION).")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing profile with a new draft.")] = False,
) -> None:
    """Draft the course profile from the ingested documents, for you to edit.

    The profile names your course in the greeting, the refusals and the reader page's header,
    lists its chapters (drafted from the documents' headings) and the topics it leaves out
    (none yet; the file shows an example). It is written to
    <data_dir>/profiles/<collection>.yaml; an existing one is kept unless --force.

    Example: textbound init --title "Marine Robotics" ~/books/marine-robotics.pdf
    """
    from textbound.embeddings import build_embeddings
    from textbound.profile import chapters_of, draft_profile, outline_of, profile_path
    from textbound.store import VectorStore

    settings = _settings(collection)
    if not title.strip():
        raise _fail("--title is empty: give the course's name, e.g. --title \"Marine Robotics\"")
    target = profile_path(settings)
    if target.exists() and not force:
        raise _fail(f"a course profile already exists at {target}: edit it, or draft a new one "
                    "over it with --force")
    if paths:
        ingest(paths=paths, jsonl=None, prune=False, collection=settings.collection,
               as_json=False)
    try:
        store = VectorStore.from_settings(settings, build_embeddings(settings))
        try:
            if not store.exists():
                raise NotIngestedError(settings.collection)
            toc = outline_of(store.scroll(("source", "title", "heading_path", "page",
                                            "start")))
        finally:
            store.close()
        if not toc:
            raise NotIngestedError(settings.collection)
        text = draft_profile(" ".join(title.split()), settings.collection, toc)
    except TextboundError as exc:
        raise _fail(exc) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    chapters = chapters_of(toc)
    console.print(f"Wrote the course profile for collection {settings.collection!r} to "
                  f"[bold]{escape(str(target))}[/]\n"
                  f"  title: {escape(' '.join(title.split()))}\n"
                  f"  chapters: {len(chapters)} from the headings of {len(toc)} document"
                  f"{'s' if len(toc) != 1 else ''}\n"
                  "Edit it now: rewrite the scope paragraph, check the chapter list, and add the "
                  "topics the course leaves out under out_of_scope (an example is in the file). "
                  "textbound reads it again on the next question; no restart needed.")
    if settings.profile:
        err.print(f"[yellow]warning:[/] TEXTBOUND_PROFILE={escape(str(settings.profile))} is "
                  "set and wins over this file; unset it to use the profile just written.")


DEMO_COLLECTION = "demo"
"""The demo's own collection: `make run` never writes to, or prunes, the one users fill."""


@app.command()
def demo() -> None:
    """Ingest the bundled textbook into its own collection and ask sample questions.

    The demo writes only to the collection "demo", so documents you ingested (into
    TEXTBOUND_COLLECTION, "textbook" by default) are never changed or removed.

    Example: textbound demo
    """
    ingest(paths=None, jsonl=None, prune=True, collection=DEMO_COLLECTION, as_json=False)
    try:
        graph, services = _graph(DEMO_COLLECTION)
    except TextboundError as exc:
        raise _fail(exc) from exc
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
        for q, sel in samples:
            note = " [dim](about a selection)" if sel else ""
            console.rule(f"[bold]{q}{note}")
            _print_response(_run(q, sel, "demo", {}, stream=False, graph=graph))
    except TextboundError as exc:
        raise _fail(exc) from exc
    finally:
        services.store.close()
    console.print(f"\nThe demo used its own collection {DEMO_COLLECTION!r}; ask it more with "
                  f"[bold]textbound ask --collection {DEMO_COLLECTION} \"...\"[/]. "
                  "For your own documents: [bold]textbound ingest PATH[/], then "
                  "[bold]textbound ask \"...\"[/].")


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
    collection: Annotated[str | None, typer.Option(
        help="Collection to answer from (default: TEXTBOUND_COLLECTION).")] = None,
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
        services = build_services(settings=_settings(collection))
        if hasattr(services.store, "exists") and not services.store.exists():
            services.store.close()
            raise NotIngestedError(services.settings.collection)
    except TextboundError as exc:
        raise _fail(exc) from exc
    graph = build_graph(services=services)
    if interactive:
        console.print(f"[dim]answering from {escape(services.scope.title)} "
                      f"(collection {services.settings.collection!r})[/]")
    history: list[tuple[str, dict[str, Any]]] = []
    shown = 0  # questions already listed by `history`: the closing table is not repeated
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
            _print_response(out)
    services.store.close()
    if len(history) > shown and not as_json:
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
