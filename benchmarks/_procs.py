"""Start, check and stop child process groups: the servers that the e2e tests and the load and
soak benchmarks run. Support code, kept out of the runtime package."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

__all__ = ["stop_group", "wait_ready"]


def stop_group(proc: subprocess.Popen[Any], grace: float = 20.0) -> None:
    """SIGTERM the process group led by proc, SIGKILL it after `grace` seconds, then reap it.

    proc must have been started with `start_new_session=True` (its pid is the group id).
    """
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def wait_ready(proc: subprocess.Popen[Any], url: str, timeout_s: float) -> str | None:
    """Poll url every half second until it answers 200; bounded by timeout_s.

    Returns None when ready, else what went wrong (the process exited, or the time ran out),
    so each caller raises in its own way.
    """
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            return f"exited with {proc.returncode}"
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return None
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            return f"was not ready within {timeout_s:.0f} s"
        time.sleep(0.5)
