"""The document routes: upload a file, ingest one again, follow a job (textbound.documents.uploads).

`mount` adds them to the app. The jobs themselves, and what each route does, are described in
textbound/documents/uploads.py; the name rules are `textbound.documents.names.check_name` and
`check_look_alike` (the CLI's `textbound ingest` applies them too), whose `UploadNameError` becomes
a 422 (not a
plain file name), 415 (a type ingestion does not read) or 409 (it looks like another name).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from textbound.documents.names import UploadNameError, check_look_alike, check_name
from textbound.documents.store import Store
from textbound.documents.uploads import KEPT_JOBS, ROUTE, DocumentJob, Job, Uploads
from textbound.errors import TextboundError
from textbound.serving.server._roles import caller_of
from textbound.serving.server._uvicorn import READ_OVERDUE
from textbound.settings import Settings
from textbound.text.sanitize import hide_paths

log = logging.getLogger("textbound.documents.uploads")

__all__ = ["mount"]

_STATUS = {"name": 422, "type": 415, "look_alike": 409}
"""The HTTP status for each rule a name can break (`UploadNameError.kind`)."""


def _job_response(job: Job, settings: Settings, status: int = 202) -> JSONResponse:
    return JSONResponse(hide_paths(job.as_json(), settings), status_code=status,
                        headers={"Location": f"{ROUTE}/jobs/{job.id}"})


_JOB = {"model": DocumentJob}
_NO_WRITE = {"description": "A student key, or a server with no keys."}


def _check_utf8_name(request: Request) -> None:
    """Raise 422 when the name in the URL is not UTF-8 once percent-decoded.

    Starlette decodes the path with replacement characters, so `%FF%FE.md` would be kept as
    the document `\ufffd\ufffd.md`, a name nobody typed.
    """
    raw = request.scope.get("raw_path") or b""
    segment = raw.rsplit(b"/", 1)[-1]
    try:
        unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError:
        shown = segment.decode("ascii", "replace")[:60]
        raise HTTPException(422, f"the document name {shown!r} is not valid UTF-8 once "
                            "percent-decoded: send the file's name as UTF-8 (e.g. "
                            "my-b%C3%BCcher.pdf for my-bücher.pdf)") from None


def _cut_off(name: str, size: int, request: Request) -> Response:
    """Log, in one line, an upload whose body stopped coming; answer (if anyone still listens)."""
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

    def require_key(request: Request) -> None:
        # RoleAuth has let only the teacher through; on a server with no keys, nobody may write
        caller = caller_of(request)
        if caller is None or caller.key_id is None:
            raise HTTPException(403, "adding documents over HTTP needs a teacher key: make one "
                                "with `textbound keys create --role teacher` (or set "
                                "TEXTBOUND_API_KEY), and send it as X-API-Key")

    @app.put(ROUTE + "/{name}", tags=["documents"], status_code=202,
             summary="Upload a document and ingest it",
             responses={202: _JOB, 403: _NO_WRITE,
                        413: {"description": "Over TEXTBOUND_MAX_UPLOAD_BYTES."},
                        415: {"description": "A file type ingestion cannot read, or a form "
                                             "upload instead of the file itself."},
                        409: {"description": "The name looks the same as an existing "
                                             "document's (case or look-alike letters)."},
                        422: {"description": "Not a plain file name (or not UTF-8), or an "
                                             "empty body."}},
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
        require_key(request)
        _check_utf8_name(request)
        try:
            name = check_name(name)
            check_look_alike(name, uploads.names())
        except UploadNameError as exc:
            raise HTTPException(_STATUS[exc.kind], str(exc)) from exc
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
              responses={202: _JOB, 403: _NO_WRITE,
                         404: {"description": "No such document in the collection."},
                         409: {"description": "The document has no file to read again."}})
    def reingest(source: str, request: Request) -> JSONResponse:
        """Read a document again from the file it was ingested from, keeping its source name."""
        require_key(request)
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
