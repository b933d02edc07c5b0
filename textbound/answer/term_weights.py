"""The collection's term statistics, read from the store, as the answer rules weigh words.

The gates and the generator weigh a question's words by IDF (textbound/answer/evidence.py): a
word the collection rarely uses counts for more. These read the statistics once per call and
fall back to uniform weights when the store cannot give them now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textbound.answer.evidence import Weigher, uniform
from textbound.errors import TextboundError

if TYPE_CHECKING:
    from textbound.documents.store import Store, TermStats

__all__ = ["term_stats", "weigher"]


def term_stats(store: Store, *, strict: bool = False) -> TermStats | None:
    """Return the collection's term statistics, or None when the store cannot give them now.

    With `strict`, a store failure is raised instead (retrieve wants the failure itself).
    """
    try:
        return store.term_stats()
    except TextboundError:
        if strict:
            raise
        return None


def weigher(store: Store, *, strict: bool = False) -> Weigher:
    """Return the IDF weigher of the store's collection (uniform without statistics)."""
    stats = term_stats(store, strict=strict)
    return stats.idf if stats is not None else uniform
