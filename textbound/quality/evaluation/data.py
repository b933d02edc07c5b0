"""Question files and corpus fingerprints: what an evaluation reads, and how it names it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from textbound.errors import SetupError


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Read a question file; raise SetupError naming the first malformed line."""
    out = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                row = json.loads(line)
                missing = [k for k in ("id", "question", "expected", "kind") if k not in row]
                if missing:
                    raise SetupError(f"{path}:{number}: missing {', '.join(missing)}")
                row.setdefault("answers", [])
                out.append(row)
    except (OSError, json.JSONDecodeError) as exc:
        raise SetupError(f"cannot read questions from {path}: {exc}") from exc
    return out


def _hash_key(text: str, salt: str = "") -> int:
    return int(hashlib.sha256(f"{salt}{text}".encode()).hexdigest(), 16)


def sample_questions(questions: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """Return the first `limit` questions (all when None) in a deterministic hash order."""
    ordered = sorted(questions, key=lambda q: _hash_key(str(q["id"]), "sample:"))
    return ordered if limit is None else ordered[:limit]


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def corpus_fingerprint(corpus: Path) -> str:
    """Hash a corpus file, or a folder's files (paths and bytes), to name its collection."""
    corpus = Path(corpus)
    if corpus.is_file():
        return file_sha256(corpus)
    h = hashlib.sha256()
    for f in sorted(p for p in corpus.rglob("*") if p.is_file()):
        if f.suffix == ".jsonl":
            continue  # question files living beside the documents are not corpus
        h.update(str(f.relative_to(corpus)).encode())
        h.update(file_sha256(f).encode())
    return h.hexdigest()
