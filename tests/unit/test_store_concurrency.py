"""What Qdrant Edge allows at once: one process per collection, any number of threads in it,
other collections of the same folder independent; a lazy store recovers when released."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from textbound.documents.store import open_store
from textbound.errors import StoreUnavailableError

from ..conftest import make_settings
from .test_store_contract import DIM, HashEmbeddings, write

HOLD = """
import sys
from tests.unit.test_store_contract import HashEmbeddings, write
from tests.conftest import make_settings
from textbound.documents.store import open_store
from pathlib import Path
s = open_store(make_settings(Path(sys.argv[1]), collection=sys.argv[2]), HashEmbeddings())
s.ensure_collection(16)
write(s, "held.md", ["held one", "held two"])
print("holding", flush=True)
sys.stdin.read()
s.close()
"""


@pytest.fixture
def holder(tmp_path: Path):
    """Another process holding collection 'held' of the data folder until the test ends."""
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "d"), "held"], cwd=repo,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"holding"
    yield proc
    if proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
    proc.stdout.close()


def test_a_collection_another_process_holds_is_a_clear_error(tmp_path: Path, holder) -> None:
    """Opening the held collection names the other process and the way out."""
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(make_settings(tmp_path / "d", collection="held"), HashEmbeddings())
    message = " ".join(str(caught.value).split())
    assert "in use by another textbound process" in message
    assert "TEXTBOUND_QDRANT_URL" in message


def test_another_collection_of_the_same_folder_is_free(tmp_path: Path, holder) -> None:
    """While one process holds a collection, another writes and searches a second one."""
    s = open_store(make_settings(tmp_path / "d", collection="other"), HashEmbeddings())
    s.ensure_collection(DIM)
    write(s, "o.md", ["free one", "free two"])
    assert s.search(s.embeddings.embed_query("free two"), 1)[0].text == "free two"
    s.close()


def test_a_lazy_store_opens_once_the_holder_exits(tmp_path: Path, holder) -> None:
    """A server's lazy store raises while the collection is held, then opens without restart."""
    s = open_store(make_settings(tmp_path / "d", collection="held"), HashEmbeddings(), lazy=True)
    with pytest.raises(StoreUnavailableError, match="in use by another textbound process"):
        s.count()
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(timeout=30)
    s.REOPEN_INTERVAL_S = 0.0  # type: ignore[misc]
    assert s.count() == 2
    s.close()


def test_threads_search_while_another_thread_writes(tmp_path: Path) -> None:
    """Searches from four threads during 40 upserts: no errors, every result well formed."""
    s = open_store(make_settings(tmp_path / "d"), HashEmbeddings())
    s.ensure_collection(DIM)
    write(s, "seed.md", ["seed"])
    errors: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        try:
            for n in range(40):
                write(s, f"w{n}.md", [f"text {n} {i}" for i in range(25)])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            done.set()

    def reader() -> None:
        rng = np.random.default_rng()
        while not done.is_set():
            try:
                hits = s.search(rng.standard_normal(DIM).tolist(), 5)
                assert hits and all(-1.0001 <= h.score <= 1.0001 for h in hits)
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
                return

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader)
                                                    for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert s.count() == 1 + 40 * 25
    s.close()
