"""The ingestion journal: every document replacement, recorded around each step that matters.

A document's new version is written beside the old one under its own version tag, then the
replacement *switches* (one fsynced journal line: the commit point), then the old version's
chunks are deleted. The journal (`<data_dir>/journal/<collection>.jsonl`, one JSON object a line,
each appended before the step it announces, a replacement's switch fsynced too) lets the next
start of the server or of `textbound ingest` settle every job a killed process left:

- no `switch` line: **rolled back**: the new version's chunks and the uploaded file that was
  waiting (`.incoming-*`) are deleted; the old version, its file and its chunks stay;
- a `switch` line: **finished**: the waiting file is moved into place and the old version's
  chunks are deleted.

Either way the job ends with a line saying so, which `GET /api/documents/jobs/{id}` reports
after the restart ("interrupted, rolled back" or "finished after restart"). Lines:
`{"job", "event": "queued"|"begin"|"switch"|"end", ...}`; `begin` names the source and the new
version, `queued` (uploads) the waiting file and its target, `end` the job's final state.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textbound.documents.store import Store
from textbound.documents.store._types import VERSION_KEY
from textbound.settings import Settings

__all__ = ["FINISHED", "ROLLED_BACK", "Journal", "Recovered", "recover", "remove_orphans",
           "settle", "uploads_folder"]

ROLLED_BACK = "interrupted, rolled back"
FINISHED = "finished after restart"
KEPT_ENDED = 100
"""Ended jobs kept when the journal is compacted at start-up; older ones are forgotten."""


class Journal:
    """The append-only journal of one collection's document jobs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_settings(cls, settings: Settings, collection: str | None = None) -> Journal:
        """Return the journal of the settings' collection under `<data_dir>/journal/`."""
        return cls(Path(settings.data_dir) / "journal" / f"{collection or settings.collection}"
                   ".jsonl")

    def record(self, job: str, event: str, *, durable: bool = False, **fields: Any) -> None:
        """Append one line: once this returns, the step it announces may begin.

        The line is written to the operating system, so a killed process loses none; with
        `durable` it is also fsynced, so a power cut cannot lose it either (the switch of a
        replacement whose old version is about to be deleted; elsewhere the store's own writes
        are no more durable than that, and an fsync costs about 7 ms here).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"job": job, "event": event, "at": round(time.time(), 3), **fields},
                          ensure_ascii=False)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            if durable:
                os.fsync(out.fileno())

    def jobs(self) -> dict[str, dict[str, Any]]:
        """Return each job's fields merged over its lines, in order (`event`: the last one).

        A torn last line (a kill during the write) is ignored: the step it announced never
        began.
        """
        out: dict[str, dict[str, Any]] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return out
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("job"), str):
                continue
            job = out.setdefault(entry["job"], {})
            if entry.get("event") == "switch":
                job["switched"] = True
            job.update(entry)
        return out

    def pending(self) -> dict[str, dict[str, Any]]:
        """Return the jobs that have not ended (their process died, or is running now)."""
        return {k: v for k, v in self.jobs().items() if v.get("event") != "end"}

    def compact(self, keep: int = KEPT_ENDED) -> None:
        """Rewrite the journal with one line per job: the pending ones and the last `keep`."""
        jobs = self.jobs()
        ended = [k for k, v in jobs.items() if v.get("event") == "end"]
        drop = set(ended[:max(0, len(ended) - keep)])
        if not jobs:
            return
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        with tmp.open("w", encoding="utf-8") as out:
            for job in jobs.values():
                if job["job"] not in drop:
                    out.write(json.dumps(job, ensure_ascii=False) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)


@dataclass
class Recovered:
    """What start-up recovery did."""

    rolled_back: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    chunks_removed: int = 0

    def __bool__(self) -> bool:
        """Whether there was anything to settle."""
        return bool(self.rolled_back or self.finished)


def _delete_version(store: Store, source: str, version: str, *, keep: bool) -> int:
    """Delete the chunks of `source` of `version` (keep False) or of every other one (True)."""
    if not store.exists():
        return 0
    ids = [cid for cid, meta in store.scroll(("source", VERSION_KEY), every_version=True)
           if meta.get("source") == source and (meta.get(VERSION_KEY) == version) != keep]
    store.delete(ids)
    return len(ids)


def recover(store: Store, journal: Journal, *, running: Iterable[str] = ()) -> Recovered:
    """Finish or roll back every job the journal shows unended; see the module docstring.

    Call it only where no other process is writing this collection (the embedded store allows
    one; with a Qdrant server, run one writer at a time): a job that is running elsewhere looks
    exactly like one whose process died. `running` names this process's own jobs, left alone.
    """
    done = Recovered()
    live = set(running)
    for job_id, job in journal.pending().items():
        if job_id in live:  # queued or running in this process: not left by a dead one
            continue
        source, version = job.get("source"), job.get("version")
        incoming = Path(job["incoming"]) if job.get("incoming") else None
        if job.get("switched"):
            if incoming is not None and incoming.exists() and job.get("target"):
                os.replace(incoming, job["target"])
            if source and version:
                done.chunks_removed += _delete_version(store, source, version, keep=True)
            journal.record(job_id, "end", status="done", recovered=FINISHED)
            done.finished.append(source or job_id)
        else:
            if source and version:
                done.chunks_removed += _delete_version(store, source, version, keep=False)
            if incoming is not None:
                incoming.unlink(missing_ok=True)
            journal.record(job_id, "end", status="failed", recovered=ROLLED_BACK,
                           error=f"{ROLLED_BACK}: the process stopped before the new version "
                           "was switched to; the previous version stays")
            done.rolled_back.append(source or job_id)
        store.unhide(str(source or ""))
    journal.compact()
    return done


def uploads_folder(settings: Settings, collection: str | None = None) -> Path:
    """Return the folder that keeps a collection's uploaded files."""
    return Path(settings.data_dir) / "uploads" / (collection or settings.collection)


def remove_orphans(folder: Path, journal: Journal) -> list[str]:
    """Remove the files of jobs no longer pending (`.incoming-*`, `.previous-*`); return them."""
    if not folder.is_dir():
        return []
    live = {Path(j["incoming"]).parent.name
            for j in journal.pending().values() if j.get("incoming")}
    removed = []
    for path in folder.iterdir():
        if path.name.startswith((".incoming-", ".previous-")) and path.name not in live:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def settle(store: Store, settings: Settings, *, running: Iterable[str] = ()) -> Recovered:
    """Recover the settings' collection at start-up, then clear its uploads' leftover files."""
    journal = Journal.for_settings(settings, store.collection)
    done = recover(store, journal, running=running)
    remove_orphans(uploads_folder(settings, store.collection), journal)
    return done
