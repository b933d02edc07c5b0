"""Stopping child process groups (the servers that tests and benchmarks start)."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

__all__ = ["stop_group"]


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
