"""Which `textbound serve` holds a collection: the file it writes, and how a command finds it.

The embedded store lets one process open a collection, and a running server holds it. So that
`textbound ask`, `stats` (and `ingest --server`) can still serve a teacher beside it, `serve`
writes `<data_dir>/servers/<collection>.json` (its pid and the address it answers on) while it
runs and removes it when it stops; `running_server` reads it, and ignores one left by a process
that no longer exists (a server killed with SIGKILL leaves it behind).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from textbound.providers.local_model import process_alive
from textbound.records.audit import utc_timestamp
from textbound.settings import Settings

__all__ = ["RunningServer", "announced", "running_server", "server_file"]


@dataclass(frozen=True)
class RunningServer:
    """A `textbound serve` answering for a collection."""

    pid: int
    url: str
    collection: str


def server_file(settings: Settings) -> Path:
    """Return where the server of the settings' collection announces itself."""
    return Path(settings.data_dir) / "servers" / f"{settings.collection}.json"


def _local_url(host: str, port: int) -> str:
    """Return the address a command on this machine reaches the server at."""
    if host in ("0.0.0.0", "", "*"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextmanager
def announced(settings: Settings, host: str, port: int, prefix: str = "") -> Iterator[Path]:
    """Announce this process as the collection's server while the block runs.

    `prefix` is where the collection's routes are when it is not the server's default course
    (`/c/<course>`): commands reach it there.
    """
    path = server_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"pid": os.getpid(), "url": _local_url(host, port) + prefix,
              "collection": settings.collection, "started": utc_timestamp()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)
    try:
        yield path
    finally:
        try:  # only our own announcement: a later server may have replaced it
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
                path.unlink()
        except (OSError, ValueError):
            pass


def running_server(settings: Settings) -> RunningServer | None:
    """Return the server announced for the settings' collection, if its process still runs."""
    try:
        data = json.loads(server_file(settings).read_text(encoding="utf-8"))
        server = RunningServer(int(data["pid"]), str(data["url"]), str(data["collection"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if server.collection != settings.collection or server.pid == os.getpid():
        return None
    return server if process_alive(server.pid) else None
