"""The operator's commands: `serve` the graph over HTTP, `report` on the audit log."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from textbound.errors import TextboundError
from textbound.serving.cli._common import console, err, fail, get_settings

if TYPE_CHECKING:
    from textbound.records.record_store import RecordStore
    from textbound.settings import Settings


def _records(settings: Settings) -> Path | RecordStore:
    """Return the course's audit log file, or its shared record store (PostgreSQL's)."""
    from textbound.records.shared import FileRecords, records_of

    if settings.audit_log is None:
        raise TextboundError("the audit log is off (TEXTBOUND_AUDIT_LOG is empty): nothing to "
                             "report; set --audit FILE")
    found = records_of(settings)
    return Path(settings.audit_log) if isinstance(found, FileRecords) else found


def report(
    audit: Annotated[Path | None, typer.Option(
        help="Audit log to read (default: TEXTBOUND_AUDIT_LOG or <data_dir>/audit.jsonl; a "
             "course's own with --course).")] = None,
    since: Annotated[str | None, typer.Option(
        help="Only responses at or after this UTC date or time, e.g. 2025-01-31.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for report.md, report.html, summary.json and the plots "
             "(default: <data_dir>/report; a course's own with --course).")] = None,
    top: Annotated[int, typer.Option(min=1, help="Most refused questions to group.")] = 50,
    collection: Annotated[str | None, typer.Option(help="Collection that names topics.")] = None,
    course: Annotated[str | None, typer.Option(help=(
        "The course reported on, when one server serves several (TEXTBOUND_COURSES): its "
        "audit log, ratings and collection, written to <data_dir>/courses/NAME/report "
        "(default: TEXTBOUND_COLLECTION's, as without courses)."))] = None,
) -> None:
    """Report answers vs refusals, refusal reasons, coverage gaps and answers marked wrong.

    The topics refused most are grouped by the collection's sections (coverage gaps); the
    answers students rated down (`textbound feedback`) by chapter, with their questions.

    Example: textbound report --since 2025-01-01 --out refusal-report/
    """
    from textbound.quality.analytics import build_report, parse_since
    from textbound.quality.plotting import pyplot
    from textbound.records.courses import course_for, course_of

    if course is None:
        settings = get_settings(collection)
        folder = course_for(settings).report_dir  # <data_dir>/report but for a further course
    else:
        try:
            chosen = course_of(get_settings(), course)
        except TextboundError as exc:
            raise fail(exc) from exc
        settings, folder = chosen.settings, chosen.report_dir
        if collection:
            settings = settings.model_copy(update={"collection": collection})
    # --audit FILE reads that file; else the course's records (PostgreSQL's tables, which
    # every server process writes, when TEXTBOUND_CHECKPOINTER=postgres)
    try:
        source = Path(audit) if audit else _records(settings)
    except TextboundError as exc:
        raise fail(exc) from exc
    if isinstance(source, Path) and not source.is_file():
        raise fail(f"no audit log at {source} (set --audit or TEXTBOUND_AUDIT_LOG)")
    try:
        start = parse_since(since)
    except ValueError as exc:
        raise fail(exc) from exc
    try:
        pyplot()  # the plots need the reports extra: say so before reading the log
    except TextboundError as exc:
        raise fail(exc) from exc
    with Progress(TextColumn("reading"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeRemainingColumn(), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("reading", total=(source.stat().st_size if isinstance(source, Path)
                                              else 0) or 1)
        result = build_report(source, out or folder, since=start,
                              settings=settings, top=top,
                              progress=lambda done, total: bar.update(task, completed=done))
    s = result.summary
    console.print(f"{s.records:,} responses: {s.answers:,} answers, {s.refusals:,} refusals; "
                  f"{s.malformed_total:,} malformed lines skipped"
                  + (f", {s.before_since:,} before --since" if start else ""))
    console.print(f"{len(result.gaps):,} chapter{'s' if len(result.gaps) != 1 else ''} with "
                  "coverage gaps (students asking: example question)"
                  + "".join(f"\n  {ch.students:>7} {escape(ch.chapter)}: "
                            f"{escape(ch.questions[0].sample or ch.questions[0].key)[:80]}"
                            for ch in result.gaps[:5]))
    for g in result.groups[:5]:
        console.print(f"  {g.span():>7} {escape(g.topic)} [dim]({g.verdict})[/]")
    fb = result.feedback
    console.print(f"{fb.down:,} of {fb.rated:,} rated responses marked wrong by students"
                  + "".join(f"\n  {len(c.runs):>7} {escape(c.chapter)}" for c in fb.chapters[:5]))
    console.print(f"report: {result.out_dir / 'report.md'} (and report.html)")


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on; 0.0.0.0 exposes it to "
                                      "the network (set TEXTBOUND_API_KEY first).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the graph over HTTP: /chat (LangServe), /healthz and /docs.

    /chat has invoke, batch, stream, stream_events and a playground at /chat/playground/.

    The embedded store allows one process: while it serves, `textbound ask` and `stats` go
    through this server (it writes <data_dir>/servers/<collection>.json), `report` and
    `feedback` read the logs, and `ingest --server URL` hands it files.

    TEXTBOUND_COURSES names further courses (collections) it serves at /c/<course>/, each
    with its own keys, conversations, audit log and report (docs/deployment.md).

    Example: textbound serve --port 8000

    Then: curl -s localhost:8000/chat/invoke -d '{"input": {"question": "What is a ROS 2 topic?"}}'
    """
    import uvicorn

    from textbound.serving.server import create_app, uvicorn_config

    settings = get_settings()
    try:
        server_app = create_app(settings=settings)
    except TextboundError as exc:
        raise fail(exc) from exc
    if host not in ("127.0.0.1", "localhost", "::1") and settings.api_key is None:
        err.print(f"[yellow]warning:[/] listening on {host} without TEXTBOUND_API_KEY")
    from contextlib import ExitStack

    from textbound.records.courses import courses_of
    from textbound.serving.cli._running import announced

    # announced while it runs, so ask and stats go through it rather than fail on the store;
    # each further course at its own /c/<course>
    with ExitStack() as stack:
        stack.enter_context(announced(settings, host, port))
        for course in courses_of(settings)[1:]:
            stack.enter_context(announced(course.settings, host, port, course.path))
        uvicorn.Server(uvicorn_config(server_app, settings, host=host, port=port,
                                      log_level=log_level)).run()

