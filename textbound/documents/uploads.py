"""Add documents while serving: upload a file, or ingest one again, in the server's process.

The embedded store lets one process open a collection (docs/store.md), so while `textbound
serve` runs, `textbound ingest` cannot write to the collection it serves. The server's document
routes (textbound/serving/server/_documents.py) do the ingestion inside the server instead, as jobs
this module runs, with `textbound.documents.ingest.ingest` (the CLI's code, so the same
file types, the same skip-with-reason and the same idempotent re-ingest):

- `PUT /api/documents/{name}`: the request body is the file (`curl -T book.pdf URL`). It is
  kept under `<data_dir>/uploads/<collection>/` (the demo and `--prune` never touch that folder)
  and ingested under the source `name`, the one `textbound ingest name` gives it, so uploading a
  file again replaces its passages. Answers 202 with a job.
- `POST /api/documents/{source}/reingest`: read a document again from the file it was ingested
  from (after editing it, or after upgrading textbound). Answers 202 with a job.
- `GET /api/documents/jobs/{id}`: the job: queued, running (passages embedded so far), done
  (the ingest summary), skipped (the reason the file cannot be used) or failed (the error).

A document is replaced atomically (`textbound.documents.ingest.ingest`): the uploaded file waits in
`.incoming-<job>/` while its new version is written hidden from searches, and moves into place at
the switch, when the new version becomes the one answered from. Every job is recorded in the
collection's journal (`textbound.documents.journal`), so the server's next start finishes or rolls
back a job a crash interrupted, removes the files it left, and still answers for it: `recovered`
says
"interrupted, rolled back" or "finished after restart".

One job runs at a time, on a thread of its own; questions are answered meanwhile. A route that
writes to the collection needs the server's API key, so without TEXTBOUND_API_KEY these routes
answer 403. Limits: TEXTBOUND_MAX_UPLOAD_BYTES (413), the file types ingestion reads (415), a
name that is a plain file name and a body that is not empty (422); the name rules are
`textbound.documents.names.check_name` and `check_look_alike`, which `textbound ingest` applies too.
This module knows nothing of HTTP.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from textbound.documents.ingest import ingest
from textbound.documents.ingest.loaders import TOO_SLOW
from textbound.documents.journal import Journal, settle, uploads_folder
from textbound.documents.store import Store
from textbound.errors import TextboundError
from textbound.settings import Settings

log = logging.getLogger("textbound.documents.uploads")

__all__ = ["DocumentJob", "Job", "Uploads", "uploads_dir"]

ROUTE = "/api/documents"
"""Where the routes live; the server's body limit lets uploads under it stream past."""
KEPT_JOBS = 100
"""Finished jobs remembered for GET .../jobs/{id}; older ones are forgotten (404)."""

Status = Literal["queued", "running", "done", "skipped", "failed"]


class DocumentJob(BaseModel):
    """An upload or re-ingest: where it stands, and what it did."""

    id: str
    action: Literal["upload", "reingest"]
    source: str = Field(description="The document's source name in the collection.")
    status: Status = Field(description="queued, running, done, skipped (the file cannot be "
                           "used: `reason` says why) or failed (`error` says why).")
    stage: str = Field(description="queued, reading, embedding, switching (to the new "
                       "version), deleting (the old version's passages) or finished.")
    done: int = Field(description="Passages embedded so far.")
    total: int | None = Field(description="Passages to embed, once the file is read.")
    reason: str | None = Field(default=None, description="Why the file was skipped.")
    error: str | None = Field(default=None, description="Why the job failed.")
    summary: dict[str, Any] | None = Field(
        default=None, description="The ingest summary, as `textbound ingest --json` prints it.")
    recovered: str | None = Field(
        default=None, description="Set when the server stopped during the job and its next start "
        "settled it: \"interrupted, rolled back\" (the previous version stays) or \"finished "
        "after restart\".")
    status_url: str = Field(description="Where to follow this job.")


@dataclass
class Job:
    """One upload or re-ingest, updated by its worker thread."""

    action: Literal["upload", "reingest"]
    source: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    status: Status = "queued"
    stage: str = "queued"
    done: int = 0
    total: int | None = None
    reason: str | None = None
    error: str | None = None
    summary: dict[str, Any] | None = None
    recovered: str | None = None
    finished_at: float | None = None

    def as_json(self) -> dict[str, Any]:
        """Return the job as the routes send it (DocumentJob's fields)."""
        data = {k: v for k, v in asdict(self).items() if k != "finished_at"}
        return data | {"status_url": f"{ROUTE}/jobs/{self.id}"}

    @classmethod
    def from_journal(cls, entry: dict[str, Any]) -> Job | None:
        """Return an ended job as the journal kept it (None: not an upload or re-ingest)."""
        if entry.get("action") not in ("upload", "reingest"):
            return None
        status = entry.get("status")
        return cls(action=entry["action"], source=str(entry.get("source", "")), id=entry["job"],
                   status=status if status in ("done", "skipped", "failed") else "failed",
                   stage="finished", done=int(entry.get("done") or 0), total=entry.get("total"),
                   reason=entry.get("reason"), error=entry.get("error"),
                   summary=entry.get("summary"), recovered=entry.get("recovered"),
                   finished_at=float(entry.get("at") or 0.0))


def uploads_dir(settings: Settings, collection: str | None = None) -> Path:
    """Return the folder that keeps a collection's uploaded files."""
    return uploads_folder(settings, collection)


class Uploads:
    """The jobs of one server: run one at a time, each remembered until KEPT_JOBS later."""

    STAGES = {"embed": "embedding", "switch": "switching", "delete": "deleting"}

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store, self.settings = store, settings
        self.folder = uploads_dir(settings, store.collection)
        self.journal = Journal.for_settings(settings, store.collection)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._recovered = False

    def recover(self) -> None:
        """Settle the jobs a stopped server left, clear its files, and remember its jobs.

        Runs at start-up, and before the first job when the store could not be opened then.
        """
        if self._recovered:
            return
        with self._lock:
            mine = list(self._jobs)
        done = settle(self.store, self.settings, running=mine)
        if done:
            log.warning("settled %d interrupted document job(s) from the journal: %s",
                        len(done.rolled_back) + len(done.finished),
                        "; ".join([*(f"{s}: rolled back" for s in done.rolled_back),
                                   *(f"{s}: finished" for s in done.finished)]))
        with self._lock:
            for entry in self.journal.jobs().values():
                job = Job.from_journal(entry)
                if job is not None and job.id not in self._jobs:
                    self._jobs[job.id] = job
        self._recovered = True

    def job(self, job_id: str) -> Job | None:
        """Return a job by id, or None when unknown or forgotten."""
        with self._lock:
            return self._jobs.get(job_id)

    def submit(self, job: Job, work: Any, **journalled: Any) -> None:
        """Record the job in the journal and queue work(job) on the one ingestion thread."""
        self.journal.record(job.id, "queued", action=job.action, source=job.source,
                            **journalled)
        with self._lock:
            self._jobs[job.id] = job
            finished = [k for k, j in self._jobs.items() if j.finished_at is not None]
            for key in finished[:max(0, len(self._jobs) - KEPT_JOBS)]:
                del self._jobs[key]
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    1, thread_name_prefix="ingest")
        self._pool.submit(self._run, job, work)

    def _run(self, job: Job, work: Any) -> None:
        job.status, job.stage = "running", "reading"
        try:
            self.recover()
            work(job)
        except TextboundError as exc:
            job.status, job.error = "failed", str(exc)
        except Exception as exc:  # noqa: BLE001 - the job reports it; the server goes on
            job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"
        job.stage, job.finished_at = "finished", time.time()
        entry = self.journal.jobs().get(job.id, {})
        if job.status == "failed" and entry.get("switched") and entry.get("event") != "end":
            # failed after the switch (deleting the old version): searches here still see only
            # the new one, and the next start finishes the deletion; an end line would stop it
            job.error = f"{job.error}; the new version is in place, and the next start of the " \
                        "server deletes the previous one's passages"
            return
        try:
            self.journal.record(job.id, "end", status=job.status, reason=job.reason,
                                error=job.error, summary=job.summary, done=job.done,
                                total=job.total)
        except OSError as exc:  # the job is done; only its memory across a restart is lost
            log.error("could not record job %s in the journal: %s", job.id, exc)

    def ingest(self, job: Job, path: Path, source: str, *, target: Path | None = None) -> bool:
        """Ingest one file under `source` for a job; return whether it gave any passages.

        `target` (an upload): where the file goes when its new version is switched to.
        """

        def progress(stage: str, done: int, total: int) -> None:
            job.stage, job.done, job.total = self.STAGES.get(stage, stage), done, total

        def switch(_source: str) -> None:
            if target is not None:
                os.replace(path, target)

        summary = ingest(self.store, [path], names={path: source},
                         origins={path: target} if target is not None else None,
                         batch_size=int(self.settings.embedding_batch_size) * 4,
                         progress=progress, sentence_vectors=bool(self.settings.sentence_vectors),
                         journal=self.journal, job=job.id, on_switch=switch,
                         time_limit_s=float(self.settings.ingest_time_limit_s))
        data = summary.as_dict()
        # the file as the client knows it, not where the server keeps it
        data["files_skipped"] = [{"file": source, "reason": r} for _, r in summary.skipped]
        job.summary = data
        if summary.chunks_added + summary.chunks_unchanged == 0:
            reason = "; ".join(r for _, r in summary.skipped) or "no text after parsing"
            if reason.startswith(TOO_SLOW):  # the file may be fine: the server was too slow
                job.status, job.error = "failed", reason
            else:
                job.status, job.reason = "skipped", reason
            return False
        job.status = "done"
        return True

    def upload(self, job: Job, incoming: Path) -> None:
        """Ingest an uploaded file; it replaces the kept file at the switch, or is dropped."""
        target = self.folder / job.source
        try:
            used = self.ingest(job, incoming, job.source, target=target)
            if used and incoming.exists():  # unchanged passages: no switch, same document
                os.replace(incoming, target)
        finally:
            shutil.rmtree(incoming.parent, ignore_errors=True)

    def names(self) -> list[str]:
        """Return the names in use: the collection's sources and the kept uploaded files."""
        names = {d["source"] for d in self.store.table_of_contents()} if self.store.exists() \
            else set()
        if self.folder.is_dir():
            names.update(p.name for p in self.folder.iterdir() if not p.name.startswith("."))
        return sorted(names)

    def origin(self, source: str) -> str | None:
        """Return the file a stored source was ingested from (KeyError: no such source)."""
        found, path = False, None
        for _, meta in self.store.scroll(("source", "path")):
            if meta.get("source") == source:
                found = True
                path = meta.get("path") or path
                if path:
                    break
        if not found:
            raise KeyError(source)
        return str(path) if path else None
