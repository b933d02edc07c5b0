"""Add documents while serving: upload a file, or ingest one again, in the server's process.

The embedded store lets one process open a collection (docs/store.md), so while `textbound
serve` runs, `textbound ingest` cannot write to the collection it serves. These routes do the
ingestion inside the server instead, with `textbound.ingest.ingest` (the CLI's code, so the same
file types, the same skip-with-reason and the same idempotent re-ingest):

- `PUT /api/documents/{name}`: the request body is the file (`curl -T book.pdf URL`). It is
  kept under `<data_dir>/uploads/<collection>/` (the demo and `--prune` never touch that folder)
  and ingested under the source `name`, the one `textbound ingest name` gives it, so uploading a
  file again replaces its passages. Answers 202 with a job.
- `POST /api/documents/{source}/reingest`: read a document again from the file it was ingested
  from (after editing it, or after upgrading textbound). Answers 202 with a job.
- `GET /api/documents/jobs/{id}`: the job: queued, running (passages embedded so far), done
  (the ingest summary), skipped (the reason the file cannot be used) or failed (the error).

A document is replaced atomically (`textbound.ingest.ingest`): the uploaded file waits in
`.incoming-<job>/` while its new version is written hidden from searches, and moves into place at
the switch, when the new version becomes the one answered from. Every job is recorded in the
collection's journal (`textbound.journal`), so the server's next start finishes or rolls back a
job a crash interrupted, removes the files it left, and still answers for it: `recovered` says
"interrupted, rolled back" or "finished after restart".

One job runs at a time, on a thread of its own; questions are answered meanwhile. A route that
writes to the collection needs the server's API key, so without TEXTBOUND_API_KEY these routes
answer 403. Limits: TEXTBOUND_MAX_UPLOAD_BYTES (413), the file types ingestion reads (415), a
name that is a plain file name and a body that is not empty (422).
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

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.requests import ClientDisconnect

from textbound.errors import TextboundError
from textbound.ingest import SUPPORTED_SUFFIXES, ingest
from textbound.ingest.loaders import TOO_SLOW
from textbound.journal import Journal, settle, uploads_folder
from textbound.names import MAX_NAME_BYTES, look_alike, nfc
from textbound.server._sanitize import hide_paths
from textbound.settings import Settings
from textbound.store import Store

log = logging.getLogger("textbound.uploads")

__all__ = ["DocumentJob", "Job", "Uploads", "check_look_alike", "check_name", "mount",
           "uploads_dir"]

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


def check_name(name: str) -> str:
    """Return the name in NFC, or raise HTTPException 422 (not a plain file name) or 415.

    The limit is in UTF-8 bytes, as the file system counts (MAX_NAME_BYTES, with room for any
    prefix a temporary copy adds): 200 ASCII characters, 100 accented or 66 CJK ones.
    """
    name = nfc(name)
    size = len(name.encode("utf-8", "surrogatepass"))
    if (not name or size > MAX_NAME_BYTES or name.startswith(".") or name != name.strip()
            or any(c in name for c in "/\\\x00") or not name.isprintable()):
        shown = name if size <= MAX_NAME_BYTES else name[:60] + "..."
        raise HTTPException(422, f"{shown!r} is not a plain file name: give the file's own "
                            "name, e.g. /api/documents/my-book.pdf (no folders, not starting "
                            f"with a dot, at most {MAX_NAME_BYTES} bytes in UTF-8: "
                            f"{MAX_NAME_BYTES} plain letters, fewer accented or CJK ones; this "
                            f"one has {size})")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kind = suffix or "files without a suffix"
        raise HTTPException(415, f"{name!r}: textbound cannot ingest {kind}; it reads "
                            + ", ".join(sorted(SUPPORTED_SUFFIXES)))
    return name


def check_look_alike(name: str, existing: list[str]) -> None:
    """Raise HTTPException 409 when `name` is a case or look-alike variant of an existing one."""
    for other in existing:
        if other != name and look_alike(name, other):
            raise HTTPException(409, f"{name!r} looks the same as the existing document "
                                f"{other!r} (it differs only in letter case or in look-alike "
                                f"letters): upload it as {other!r} to replace that document, "
                                "or give it a name that reads differently")


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


def _job_response(job: Job, settings: Settings, status: int = 202) -> JSONResponse:
    return JSONResponse(hide_paths(job.as_json(), settings), status_code=status,
                        headers={"Location": f"{ROUTE}/jobs/{job.id}"})


_JOB = {"model": DocumentJob}


def _cut_off(name: str, size: int, request: Request) -> Response:
    """Log, in one line, an upload whose body stopped coming; answer (if anyone still listens)."""
    from textbound.server._uvicorn import READ_OVERDUE

    if request.scope.get(READ_OVERDUE):
        log.warning("upload of %r stopped after %s bytes: the body did not arrive within "
                    "TEXTBOUND_REQUEST_READ_TIMEOUT_S (answered 408)", name, f"{size:,}")
        return Response(status_code=408)
    log.info("upload of %r stopped after %s bytes: the client disconnected", name, f"{size:,}")
    return Response(status_code=400)


def mount(app: Any, *, store: Store, settings: Settings) -> Uploads:
    """Add the document routes to a FastAPI app; returns their job table."""
    uploads = Uploads(store, settings)
    try:
        uploads.recover()
    except TextboundError as exc:  # the store is not available yet: the first job recovers
        log.warning("start-up recovery of document jobs postponed: %s", exc)
    limit = int(settings.max_upload_bytes)

    def require_key() -> None:
        # ApiKeyAuth has checked the key when the server has one; without one, nobody may write
        if settings.api_key is None or not settings.api_key.get_secret_value():
            raise HTTPException(403, "adding documents over HTTP needs an API key: start the "
                                "server with TEXTBOUND_API_KEY set, and send it as X-API-Key")

    @app.put(ROUTE + "/{name}", tags=["documents"], status_code=202,
             summary="Upload a document and ingest it",
             responses={202: _JOB, 403: {"description": "The server has no TEXTBOUND_API_KEY."},
                        413: {"description": "Over TEXTBOUND_MAX_UPLOAD_BYTES."},
                        415: {"description": "A file type ingestion cannot read, or a form "
                                             "upload instead of the file itself."},
                        409: {"description": "The name looks the same as an existing "
                                             "document's (case or look-alike letters)."},
                        422: {"description": "Not a plain file name, or an empty body."}},
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string",
                                                         "format": "binary"}}}}})
    async def upload(name: str, request: Request) -> Response:
        """Keep the body as the file `name` and ingest it; follow the job at `status_url`.

        Send the file itself as the body (`curl -T my-book.pdf -H "X-API-Key: $KEY"
        http://127.0.0.1:8000/api/documents/my-book.pdf`), not a form. Uploading a name again
        replaces that document's passages; a file that cannot be used is skipped with the reason
        and the previous version stays.
        """
        require_key()
        name = check_name(name)
        check_look_alike(name, uploads.names())
        if request.headers.get("content-type", "").startswith("multipart/"):
            raise HTTPException(415, "send the file itself as the request body (curl -T FILE "
                                "URL, or fetch with the File as body), not a multipart form")
        too_big = (f"{name!r} is larger than the server's upload limit of {limit:,} bytes "
                   "(TEXTBOUND_MAX_UPLOAD_BYTES)")
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise HTTPException(413, too_big)
        job = Job(action="upload", source=name)
        uploads.folder.mkdir(parents=True, exist_ok=True)
        incoming = uploads.folder / f".incoming-{job.id}" / name
        size, head = 0, b""
        try:
            incoming.parent.mkdir()
            with incoming.open("wb") as out:
                try:
                    async for part in request.stream():
                        size += len(part)
                        if size > limit:
                            raise HTTPException(413, too_big)
                        if len(head) < 8:
                            head += part[:8]
                        out.write(part)
                except ClientDisconnect:
                    shutil.rmtree(incoming.parent, ignore_errors=True)
                    return _cut_off(name, size, request)
            if size == 0:
                raise HTTPException(422, f"{name!r} is empty: send the file's bytes as the body")
            if name.lower().endswith(".pdf") and not head.startswith(b"%PDF-"):
                raise HTTPException(415, f"{name!r} is not a PDF (it does not start with %PDF-)")
        except BaseException:
            shutil.rmtree(incoming.parent, ignore_errors=True)
            raise
        uploads.submit(job, lambda j: uploads.upload(j, incoming), incoming=str(incoming),
                       target=str(uploads.folder / name))
        return _job_response(job, settings)

    @app.post(ROUTE + "/{source:path}/reingest", tags=["documents"], status_code=202,
              summary="Ingest a document again from its file",
              responses={202: _JOB, 403: {"description": "The server has no TEXTBOUND_API_KEY."},
                         404: {"description": "No such document in the collection."},
                         409: {"description": "The document has no file to read again."}})
    def reingest(source: str) -> JSONResponse:
        """Read a document again from the file it was ingested from, keeping its source name."""
        require_key()
        try:
            path = uploads.origin(source)
        except KeyError as exc:
            raise HTTPException(404, f"no document {source!r} in this collection") from exc
        if path is None:
            raise HTTPException(409, f"{source!r} came from a JSONL corpus, not a file: ingest "
                                "that corpus again with `textbound ingest --jsonl`")
        file = Path(path)
        if not file.is_file():
            raise HTTPException(409, hide_paths(
                f"{source!r} was ingested from {file}, which no longer exists: upload the file "
                f"again with PUT {ROUTE}/{Path(source).name}", settings))
        job = Job(action="reingest", source=source)
        uploads.submit(job, lambda j: uploads.ingest(j, file, source), file=str(file))
        return _job_response(job, settings)

    @app.get(ROUTE + "/jobs/{job_id}", tags=["documents"], summary="An upload's progress",
             responses={200: _JOB, 404: {"description": "No such job (or a long-finished one)."}})
    def job_status(job_id: str) -> JSONResponse:
        """Return the job: its status, the passages embedded so far and, once done, the summary."""
        job = uploads.job(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id!r} (jobs are kept until {KEPT_JOBS} later "
                                "ones finish)")
        return _job_response(job, settings, 200)

    return uploads
