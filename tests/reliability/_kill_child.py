"""A child process for the kill tests: replace a document, SIGKILLing itself at one stage.

    python -m tests.reliability._kill_child MODE STAGE DATA FILE [NAME]

MODE `upload` does what `PUT /api/documents/NAME` does with FILE's bytes (the route's waiting
file, the journal's `queued` line, the ingestion thread); MODE `ingest` runs `textbound ingest
FILE` (start-up recovery and all). STAGE names where the process kills itself with a real
SIGKILL: `reading` (loading the file), `embedding` (after the first batch is written),
`switching` (right after the switch is journalled), `deleting` (half the old version deleted),
or `none` (runs to the end). Embeddings are `HashEmbedder`'s, so no model is loaded. An upload
prints its job id first.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from textbound.fakes import HashEmbedder
from textbound.settings import Settings


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(stage: str, store: Any) -> None:
    """Patch the step where the process is to die."""
    import textbound.documents.ingest.pipeline as pipeline
    from textbound.documents.journal import Journal

    if stage == "reading":
        def load_file(*args: Any, **kwargs: Any) -> Any:
            _die()

        pipeline.load_file = load_file  # type: ignore[assignment]
    elif stage == "embedding":
        upsert, calls = store.upsert, [0]

        def counted(*args: Any, **kwargs: Any) -> None:
            calls[0] += 1
            if calls[0] == 2:  # one batch of the new version is written, not all
                _die()
            upsert(*args, **kwargs)

        store.upsert = counted
    elif stage == "switching":
        record = Journal.record

        def switch(self: Journal, job: str, event: str, **fields: Any) -> None:
            record(self, job, event, **fields)
            if event == "switch":
                _die()

        Journal.record = switch  # type: ignore[method-assign]
    elif stage == "deleting":
        delete = store.delete

        def half(ids: list[str]) -> None:
            delete(ids[:len(ids) // 2])
            _die()

        store.delete = half


def main(mode: str, stage: str, data: Path, file: Path, name: str | None = None) -> None:
    """Run one replacement; see the module docstring."""
    settings = Settings(_env_file=None, data_dir=data, embedding_batch_size=1)  # type: ignore[call-arg]
    embeddings = HashEmbedder(32)
    if mode == "ingest":
        import textbound.documents.journal as journal
        import textbound.providers.embeddings
        from textbound.serving.cli import app

        textbound.providers.embeddings.build_embeddings = lambda _settings: embeddings  # type: ignore[assignment]
        settle = journal.settle

        def settle_then_arm(store: Any, *args: Any, **kwargs: Any) -> Any:
            done = settle(store, *args, **kwargs)
            _arm(stage, store)  # after start-up recovery, which deletes too
            return done

        journal.settle = settle_then_arm  # type: ignore[assignment]
        os.environ["TEXTBOUND_DATA_DIR"] = str(data)
        os.environ["TEXTBOUND_EMBEDDING_BATCH_SIZE"] = "1"
        app(["ingest", str(file), "--json"], standalone_mode=False)
        return

    import shutil

    from textbound.documents.store import open_store
    from textbound.documents.uploads import Job, Uploads

    store = open_store(settings, embeddings)
    uploads = Uploads(store, settings)
    uploads.recover()
    _arm(stage, store)
    name = name or file.name
    job = Job(action="upload", source=name)
    print(job.id, flush=True)
    incoming = uploads.folder / f".incoming-{job.id}" / name
    incoming.parent.mkdir(parents=True)
    shutil.copyfile(file, incoming)
    uploads.submit(job, lambda j: uploads.upload(j, incoming), incoming=str(incoming),
                   target=str(uploads.folder / name))
    assert uploads._pool is not None
    uploads._pool.shutdown(wait=True)
    print(job.status, job.error or "", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]),
         sys.argv[5] if len(sys.argv) > 5 else None)
