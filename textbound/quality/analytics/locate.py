"""Store look-ups: the nearest section of the collection for each refused question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textbound.quality.analytics.topics import NOTHING_CLOSE, Locator
from textbound.settings import Settings


def store_locator(settings: Settings, embeddings: Any = None) -> tuple[Locator, Callable[[], None]]:
    """Return a locator over the settings' collection and a function that closes the store.

    `embeddings` defaults to the settings' own. Raises TextboundError when the store cannot be
    opened or the collection does not exist.
    """
    from textbound.documents.store import open_store, opened_store, require_collection
    from textbound.providers.embeddings import build_embeddings

    # Probe first: loading the embedding model costs hundreds of MB, wasted on a missing collection.
    # exists() needs no embeddings
    with opened_store(settings, None) as probe:  # type: ignore[arg-type]
        require_collection(probe)
    embeddings = embeddings or build_embeddings(settings)
    store = open_store(settings, embeddings)

    def locate(texts: list[str]) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        for vector in embeddings.embed_documents(texts):
            hits = store.search(vector, 1)
            if not hits:
                out.append((NOTHING_CLOSE, -1.0))
                continue
            meta = hits[0].metadata
            path = [str(p) for p in meta.get("heading_path") or [] if p]
            name = " > ".join(path[:2]) or hits[0].section or hits[0].source or "(untitled)"
            out.append((name, hits[0].score))
        return out

    return locate, store.close
