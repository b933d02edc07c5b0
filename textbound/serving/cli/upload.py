"""`ingest --server`: hand files to a running `textbound serve`, which keeps and ingests them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.markup import escape

from textbound.serving.cli._common import console, err, fail
from textbound.settings import Settings


def files_for_server(paths: list[Path]) -> list[Path]:
    """Return the files to upload: each file given, and the readable files under each folder."""
    from textbound.documents.ingest import discover

    files = [f for f, _ in discover(paths) if isinstance(f, Path)]
    names = [f.name for f in files]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise fail("the server keeps each file under its own name, and these names repeat: "
                   + ", ".join(repeated) + "; rename them or upload them one at a time")
    return files


def ingest_on_server(url: str, paths: list[Path], settings: Settings, as_json: bool) -> None:
    """Upload each file to PUT /api/documents/NAME and follow its job until it ends.

    Exits 2 when the server cannot be reached or ingested none of the files.
    """
    import time
    from urllib.parse import quote

    import httpx

    files = files_for_server(paths)
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
        raise fail(f"cannot reach the textbound server at {url}: {exc}") from exc
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
        raise fail(f"nothing was ingested by the server at {url}"
                   + (" (each file is listed with its reason)" if results else
                      ": no readable Markdown, text, HTML or PDF files"))

