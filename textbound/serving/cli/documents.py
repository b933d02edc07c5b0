"""The collection commands: `ingest` (locally, or through a running server), `stats`, `init`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from textbound.errors import NotIngestedError, StoreInUseError, TextboundError
from textbound.serving.cli._common import console, err, fail, get_settings
from textbound.serving.cli.upload import ingest_on_server
from textbound.settings import Settings

GROUP_SKIPPED = 5
"""Files skipped for one reason are listed one a line up to this many, then as one line."""


def _by_reason(skipped: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """The skipped files grouped by reason, in the order each reason first occurs."""
    groups: dict[str, list[str]] = {}
    for f, reason in skipped:
        groups.setdefault(reason, []).append(f)
    return list(groups.items())


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
    from textbound.documents.ingest import ingest as run_ingest
    from textbound.documents.journal import Journal, settle
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import build_embeddings

    settings = get_settings(collection)
    if not paths and not jsonl:
        paths = [settings.corpus_dir]
    missing = [str(p) for p in [*(paths or []), *(jsonl or [])] if not p.exists()]
    if missing:
        raise fail(f"no such file or folder: {', '.join(missing)}")
    if server:
        if jsonl or prune or collection:
            raise fail("--server uploads files to the collection the server serves; --jsonl, "
                       "--prune and --collection do not apply")
        ingest_on_server(server, paths or [], settings, as_json)
        return
    try:
        with opened_store(settings, build_embeddings(settings)) as store:
            recovered = settle(store, settings)
            for source in recovered.rolled_back:
                err.print(f"[yellow]rolled back[/] an interrupted replacement of "
                          f"{escape(source)}: its previous version stays")
            for source in recovered.finished:
                err.print(f"[yellow]finished[/] an interrupted replacement of {escape(source)}")
            with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                          TextColumn("{task.completed}/{task.total} chunks"),
                          TimeRemainingColumn(), console=err,
                          disable=as_json or not err.is_terminal) as bar:
                task = bar.add_task("embedding", total=None)

                def progress(stage: str, done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                _check_names(paths or [], store)
                summary = run_ingest(store, paths or [], jsonl=jsonl or [], prune=prune,
                                     batch_size=settings.embedding_batch_size * 4,
                                     progress=progress, sentence_vectors=settings.sentence_vectors,
                                     journal=Journal.for_settings(settings, store.collection))
            chunks_total = store.count()
    except StoreInUseError as exc:
        given = " ".join(map(str, paths or []))
        raise fail(f"{exc}\nIf that process is `textbound serve`, hand the files to it "
                   f"instead: textbound ingest --server http://127.0.0.1:8000 {given} (your "
                   "server's address; it keeps the files and ingests them, and needs "
                   "TEXTBOUND_API_KEY; see docs/own-textbook.md)") from exc
    except TextboundError as exc:
        raise fail(exc) from exc
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
        for reason, files in _by_reason(summary.skipped):
            if len(files) < GROUP_SKIPPED:
                for f in files:
                    console.print(f"[yellow]skipped[/] {escape(f)}: {escape(reason)}")
            else:  # a manual's hundred redirect pages are one line, not a hundred
                first = escape(", ".join(files[:2]))
                console.print(f"[yellow]skipped {len(files)} files[/] ({first} and "
                              f"{len(files) - 2} more; --json lists each): {escape(reason)}")
        for source, n in summary.pruned:
            console.print(f"[yellow]removed[/] {escape(source)} ({n} chunks): no longer under "
                          f"{escape(given)}")
    if summary.chunks_added + summary.chunks_unchanged == 0:
        # an empty folder, or one of unreadable files, is a mistake worth a non-zero exit
        raise fail(f"nothing to ingest in {given}: no readable Markdown, text, HTML or PDF "
                   "files" + (" (each skipped file is listed with its reason)"
                              if summary.skipped else ""))


def _check_names(paths: list[Path], store: Any) -> None:
    """Apply the upload name rules (textbound.documents.names) to every file about to be ingested.

    Raises UploadNameError before anything is written: a name that is not a plain file name, or
    a source that reads the same as another one (the collection's or this call's). A file of a
    type ingestion does not read is left to ingest, which skips it with the reason, as before.
    """
    from textbound.documents.ingest import discover
    from textbound.documents.names import UploadNameError, check_look_alike, check_name

    taken = [d["source"] for d in store.table_of_contents()] if store.exists() else []
    for file, source in discover(paths):
        if not isinstance(file, Path):
            continue  # a missing file or an unread type: ingest lists it as skipped
        try:
            check_name(file.name)
        except UploadNameError as exc:
            if exc.kind != "type":
                raise
        check_look_alike(source, taken)
        taken.append(source)


def stats(collection: Annotated[str | None, typer.Option(help="Collection.")] = None,
          as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the collection: where it lives, its embedding model, chunks and documents.

    While `textbound serve` runs on the collection, the figures come from that server.

    Example: textbound stats
    """
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import build_embeddings
    from textbound.serving.cli._running import running_server
    from textbound.serving.cli._through_server import stats_from_server

    settings = get_settings(collection)
    server = running_server(settings)
    if server is not None:  # it holds the collection: ask it
        data = stats_from_server(server, settings)
        toc = data.pop("table_of_contents")
    else:
        try:
            with opened_store(settings, build_embeddings(settings)) as store:
                if not store.exists():
                    raise NotIngestedError(settings.collection)
                info = store.info()
                toc = store.table_of_contents()
            profile = _profile(settings, toc)
        except TextboundError as exc:
            raise fail(exc) from exc
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


def _profile(settings: Settings, toc: list[dict[str, Any]]) -> Any:
    """Return the course profile in force for the settings' collection, given its documents."""
    from textbound.documents.profile import ProfileResolver

    return ProfileResolver(settings, settings.collection, lambda: toc).current()


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
    from textbound.documents.profile import chapters_of, outline_of, profile_path
    from textbound.documents.profile_draft import draft_profile
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import build_embeddings

    settings = get_settings(collection)
    if not title.strip():
        raise fail("--title is empty: give the course's name, e.g. --title \"Marine Robotics\"")
    target = profile_path(settings)
    if target.exists() and not force:
        raise fail(f"a course profile already exists at {target}: edit it, or draft a new one "
                   "over it with --force")
    if paths:
        ingest(paths=paths, jsonl=None, prune=False, collection=settings.collection,
               as_json=False)
    try:
        with opened_store(settings, build_embeddings(settings)) as store:
            if not store.exists():
                raise NotIngestedError(settings.collection)
            toc = outline_of(store.scroll(("source", "title", "heading_path", "page",
                                            "start")))
        if not toc:
            raise NotIngestedError(settings.collection)
        text = draft_profile(" ".join(title.split()), settings.collection, toc)
    except TextboundError as exc:
        raise fail(exc) from exc
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

