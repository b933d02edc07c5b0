"""Servers in subprocesses: copies of the ingested data folder, free ports, bounded start, stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks._procs import stop_group, wait_ready
from tests.conftest import REPO, copy_ingested

VENV_BIN = Path(sys.executable).parent

MARINE_BOOK = """# Marine Robots

## Gliders

An underwater glider changes its buoyancy to move forward. It dives and climbs in a saw-tooth
pattern and needs no propeller, so one battery lasts for weeks of sampling.

## Floats

A profiling float drifts with the current at depth and rises to the surface every ten days to
send its temperature and salinity measurements by satellite.
"""
"""A small second book (two sections) for the tests that serve or ask beside the textbook."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago (never 2024)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 2024:
            return port


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for a server subprocess: no developer TEXTBOUND_*, no tracing, offline."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update({
        "TEXTBOUND_DATA_DIR": str(data_dir),
        "LANGSMITH_TEST_TRACKING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "TOKENIZERS_PARALLELISM": "false",
    })
    env.update(extra)
    return env


@dataclass
class Running:
    """A server subprocess and where it listens."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        """Return what the server printed so far (for failure messages)."""
        return self.log.read_text(errors="replace")[-4000:]


@contextmanager
def run_server(cmd: list[str], *, env: Mapping[str, str], cwd: Path, port: int,
               ready_path: str, timeout_s: float, log: Path) -> Iterator[Running]:
    """Start cmd in its own process group, wait (bounded) until ready_path answers 200, stop it."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    running = Running(proc, f"http://127.0.0.1:{port}", log)
    try:
        problem = wait_ready(proc, running.url + ready_path, timeout_s)
        if problem:
            pytest.fail(f"{cmd[0]} {problem}:\n{running.output()}")
        yield running
    finally:
        stop_group(proc)


@pytest.fixture
def data_dir(ingested_template: Path, tmp_path: Path) -> Path:
    """This test's own copy of the ingested data folder (one embedded store per process)."""
    return copy_ingested(ingested_template, tmp_path / "data")


__all__ = ["REPO", "VENV_BIN", "Running", "free_port", "run_server", "server_env"]
