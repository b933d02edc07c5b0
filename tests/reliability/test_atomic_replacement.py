"""Replacing a document survives a SIGKILL at every stage (issue 28, finding 1).

A child process (`tests/reliability/_kill_child.py`) replaces a document, by upload or by
`textbound ingest`, and kills itself with a real SIGKILL while reading, embedding, switching or
deleting. Then a restart (the server's or `textbound ingest`'s start-up recovery) must leave
every document answering from exactly one version: the old one when the kill came before the
switch, the new one after it, and the other document untouched; no waiting file is left, and
the upload's job says what happened.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, make_settings
from textbound.documents.ingest import chunk_document, load_file
from textbound.documents.store import open_store
from textbound.fakes import HashEmbedder


def _para(i: int, what: str) -> str:
    return " ".join(f"Sentence {j} of paragraph {i} says the {what} {i} moves as planned."
                    for j in range(7))


OLD = "# Robot arms\n\n" + "\n\n".join(_para(i, "servo") for i in range(14)) + "\n"
NEW = "# Robot arms, revised\n\n" + "\n\n".join(
    _para(i, "gripper" if i % 2 else "servo") for i in range(18)) + "\n"
OTHER = "# Sensors\n\nA lidar measures distance with light pulses.\n"
STAGES = {"reading": "old", "embedding": "old", "switching": "new", "deleting": "new"}


def _child(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTBOUND_")}
    env["TEXTBOUND_ANSWERABILITY"] = "false"
    return subprocess.run([sys.executable, "-m", "tests.reliability._kill_child", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def _texts(text: str, tmp: Path) -> set[str]:
    (tmp / "probe").mkdir(exist_ok=True)
    path = tmp / "probe" / "arms.md"
    path.write_text(text)
    return {c.text for c in chunk_document(load_file(path, "arms.md"))}


def _versions(store: Any, source: str) -> tuple[set[Any], set[str]]:
    """The version tags of a source's chunks, and their texts."""
    metas = [(cid, m) for cid, m in store.scroll(("source", "version"), every_version=True)
             if m.get("source") == source]
    texts = {c.text for c in store.retrieve([cid for cid, _ in metas])}
    return {m.get("version") for _, m in metas}, texts


def _check_one_version(store: Any, source: str, expect: set[str], other: str,
                       other_texts: set[str]) -> None:
    versions, texts = _versions(store, source)
    assert len(versions) == 1, f"{source} has chunks of {len(versions)} versions"
    assert texts == expect
    assert _versions(store, other)[1] == other_texts  # the earlier document is not lost
    # what searches see: every chunk, each once, of that one version
    hits = store.search(HashEmbedder(32).embed_query("servo"), 200)
    seen = [h.text for h in hits if h.metadata["source"] == source]
    assert sorted(seen) == sorted(texts)


@pytest.mark.parametrize("stage", list(STAGES))
def test_an_upload_killed_at_each_stage_is_settled_at_restart(tmp_path: Path, stage: str) -> None:
    """SIGKILL while an upload reads, embeds, switches or deletes: one version after restart."""
    from textbound.documents.journal import FINISHED, ROLLED_BACK
    from textbound.documents.uploads import Uploads

    data = tmp_path / "data"
    for name, text in (("arms.md", OLD), ("sensors.md", OTHER)):
        (tmp_path / name).write_text(text)
        done = _child("upload", "none", str(data), str(tmp_path / name))
        assert done.returncode == 0 and "done" in done.stdout, done.stderr
    (tmp_path / "v2.md").write_text(NEW)
    killed = _child("upload", stage, str(data), str(tmp_path / "v2.md"), "arms.md")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    job_id = killed.stdout.split()[0]

    settings = make_settings(data)
    store = open_store(settings, HashEmbedder(32))  # type: ignore[arg-type]
    try:
        uploads = Uploads(store, settings)
        (uploads.folder / ".previous-0123abcd-arms.md").write_text(OLD)  # an older release's
        uploads.recover()  # what the server does at start
        want = STAGES[stage]
        _check_one_version(store, "arms.md", _texts(OLD if want == "old" else NEW, tmp_path),
                           "sensors.md", _texts(OTHER, tmp_path))
        kept = uploads.folder / "arms.md"
        assert kept.read_text() == (OLD if want == "old" else NEW)
        assert sorted(p.name for p in uploads.folder.iterdir()) == ["arms.md", "sensors.md"]
        job = uploads.job(job_id)
        assert job is not None
        assert job.recovered == (ROLLED_BACK if want == "old" else FINISHED)
        assert job.status == ("failed" if want == "old" else "done")
    finally:
        store.close()


@pytest.mark.parametrize("stage", list(STAGES))
def test_textbound_ingest_killed_at_each_stage_is_settled_at_restart(tmp_path: Path,
                                                                   stage: str) -> None:
    """SIGKILL during `textbound ingest` of a changed file: one version, then the new one."""
    from textbound.documents.ingest import ingest
    from textbound.documents.journal import Journal, settle

    data, folder = tmp_path / "data", tmp_path / "docs"
    folder.mkdir()
    (folder / "arms.md").write_text(OLD)
    (folder / "sensors.md").write_text(OTHER)
    first = _child("ingest", "none", str(data), str(folder))
    assert first.returncode == 0, first.stderr
    (folder / "arms.md").write_text(NEW)
    killed = _child("ingest", stage, str(data), str(folder))
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    settings = make_settings(data)
    store = open_store(settings, HashEmbedder(32))  # type: ignore[arg-type]
    try:
        settle(store, settings)  # what `textbound ingest` does first
        want = OLD if STAGES[stage] == "old" else NEW
        _check_one_version(store, "docs/arms.md", _texts(want, tmp_path), "docs/sensors.md",
                           _texts(OTHER, tmp_path))
        assert Journal.for_settings(settings).pending() == {}
        # and the run after the restart ends at the new version, exactly
        again = ingest(store, [folder], journal=Journal.for_settings(settings))
        assert again.files_changed == (1 if STAGES[stage] == "old" else 0)
        _check_one_version(store, "docs/arms.md", _texts(NEW, tmp_path), "docs/sensors.md",
                           _texts(OTHER, tmp_path))
    finally:
        store.close()


def test_a_store_failure_while_deleting_is_finished_at_the_next_start(tmp_path: Path) -> None:
    """The old version's deletion fails: the job fails, the journal keeps it, a restart ends it."""
    from textbound.documents.journal import FINISHED
    from textbound.documents.store.memory import MemoryStore
    from textbound.documents.uploads import Job, Uploads
    from textbound.errors import StoreUnavailableError

    settings = make_settings(tmp_path / "data")
    store = MemoryStore(HashEmbedder(32))  # type: ignore[arg-type]

    def upload(text: str) -> Job:
        uploads = Uploads(store, settings)
        uploads.recover()
        job = Job(action="upload", source="arms.md")
        incoming = uploads.folder / f".incoming-{job.id}" / "arms.md"
        incoming.parent.mkdir(parents=True)
        incoming.write_text(text)
        uploads.submit(job, lambda j: uploads.upload(j, incoming), incoming=str(incoming),
                       target=str(uploads.folder / "arms.md"))
        assert uploads._pool is not None
        uploads._pool.shutdown(wait=True)
        return job

    assert upload(OLD).status == "done"
    def broken(ids: list[str]) -> None:
        raise StoreUnavailableError("the store went away")

    delete = store.delete
    store.delete = broken  # type: ignore[method-assign]
    failed = upload(NEW)
    assert failed.status == "failed" and "next start" in (failed.error or "")
    hits = store.search(HashEmbedder(32).embed_query("servo"), 200)
    assert {h.text for h in hits} == _texts(NEW, tmp_path)  # searches see the new version only
    store.delete = delete  # type: ignore[method-assign]
    restarted = Uploads(store, settings)
    restarted.recover()
    assert _versions(store, "arms.md")[1] == _texts(NEW, tmp_path)
    job = restarted.job(failed.id)
    assert job is not None and job.recovered == FINISHED and job.status == "done"
