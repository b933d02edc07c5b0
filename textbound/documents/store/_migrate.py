"""Convert collections made by qdrant-client's local mode into Edge shards (`migrate-store`).

The old folder is read, never changed: each collection's points (ids, vectors, payloads) and its
embedding-model record are copied into `<qdrant_path>/edge/<collection>/`, and the collection's
metadata file is written last, after the copy is counted complete. A run killed part-way leaves
no collection (the next run resumes into the same shard; upserts by id are idempotent); a
collection already converted is skipped, never overwritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textbound.documents.store._edge import META_FILE, EdgeStore, edge_folder
from textbound.documents.store._qdrant import QdrantStore, open_client
from textbound.documents.store._sparse import SPARSE_VERSION
from textbound.errors import SetupError
from textbound.settings import Settings

__all__ = ["Migrated", "legacy_collections", "migrate"]

BATCH = 512


@dataclass
class Migrated:
    """What happened to one collection."""

    collection: str
    points: int
    status: str  # "converted" or "already converted"
    seconds: float = 0.0


def _dense(vector: Any) -> list[float]:
    """Return a stored point's dense vector: the vector, or the unnamed one beside BM25's."""
    return list((vector or {}).get("") or [] if isinstance(vector, dict) else vector)


def legacy_collections(settings: Settings) -> list[str]:
    """Return the collections qdrant-client's local mode stored under `qdrant_path`."""
    root = settings.qdrant_folder / "collection"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "storage.sqlite").exists())


def migrate(settings: Settings, collections: list[str] | None = None,
            progress: Callable[[str, int, int], None] | None = None) -> list[Migrated]:
    """Copy these legacy collections (default: all) into Edge shards; return what was done."""
    found = legacy_collections(settings)
    names = collections or found
    unknown = sorted(set(names) - set(found))
    if unknown:
        raise SetupError(f"No collection {', '.join(map(repr, unknown))} in the old embedded "
                         f"store at {settings.qdrant_path} (it has: {', '.join(found) or 'none'}).")
    folder = edge_folder(settings)
    results: list[Migrated] = []
    client = open_client(settings.model_copy(update={"qdrant_url": None}))
    try:
        for name in names:
            t0 = time.perf_counter()
            old = QdrantStore(client, name, None, location=str(settings.qdrant_path))  # type: ignore[arg-type]
            info = old.info()
            metadata, dimension, total = info["metadata"], info["dimension"], info["points"]
            if (folder / name / META_FILE).exists():
                results.append(Migrated(name, EdgeStore(folder, name, None).count(),  # type: ignore[arg-type]
                                        "already converted"))
                continue
            if dimension is None:
                raise SetupError(f"Collection {name!r} has no single dense vector; textbound "
                                 "did not make it and cannot convert it.")
            new = EdgeStore(folder, name, None)  # type: ignore[arg-type]
            try:
                with new._using("create_collection") as h:
                    new.create_shard(h, int(dimension))
                copied, offset = 0, None
                while True:
                    points, offset = client.scroll(name, limit=BATCH, offset=offset,
                                                   with_payload=True, with_vectors=True)
                    if points:
                        with new._using("upsert") as h:
                            new._write(h, [str(p.id) for p in points],
                                       [_dense(p.vector) for p in points],
                                       [dict(p.payload or {}) for p in points])
                    copied += len(points)
                    if progress:
                        progress(name, copied, total)
                    if offset is None:
                        break
                with new._using("count") as h:
                    stored = new._count(h)
                if stored != total:
                    raise SetupError(f"Collection {name!r}: copied {stored} of {total} points; "
                                     "run `textbound migrate-store` again.")
                with new._using("optimize") as h:
                    new._optimize(h)
                    # Edge's _write stored each point's BM25 vector beside the dense one
                    new.write_metadata(h, dict(metadata) | {"sparse": SPARSE_VERSION})
            finally:
                new.close()
            results.append(Migrated(name, total, "converted", time.perf_counter() - t0))
    finally:
        client.close()
    return results
