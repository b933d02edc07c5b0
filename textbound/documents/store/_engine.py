"""An engine handle, and the primitives a store implementation supplies over it.

`Engine` holds the handle: opened now, or lazily on first use with retry (at most once per
`REOPEN_INTERVAL_S` after a failure), used under one lock, any failure turned into a
TextboundError (`unavailable`), and released on `close`. An implementation overrides the
primitives for its engine; `textbound.documents.store._base.BaseStore` builds everything else on
them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import numpy as np

from textbound.documents.store._sparse import Sparse
from textbound.errors import StoreUnavailableError, TextboundError

__all__ = ["PAGE", "Engine", "Payload", "cosine", "unavailable"]

PAGE = 1024
"""Points per scroll page (`_page`)."""

H = TypeVar("H")
Payload = dict[str, Any]


def dense_of(stored: Any) -> list[float] | None:
    """Return a point's dense vector as an engine returned it, or None when it holds none.

    The engine returns a list, or a dict holding it under the unnamed vector's name "" beside
    the BM25 vector.
    """
    v = stored.get("") if isinstance(stored, dict) else stored
    return [float(x) for x in v] if isinstance(v, list) else None


def cosine(query: list[float], stored: Any) -> float:
    """Return the cosine of a query and a point's dense vector as an engine returned it.

    The engine returns a list, or a dict holding it under the unnamed vector's name "".
    """
    v = np.asarray(stored.get("") if isinstance(stored, dict) else stored, dtype=np.float32)
    q = np.asarray(query, dtype=np.float32)
    return float(v @ q / ((np.linalg.norm(v) * np.linalg.norm(q)) or 1.0))


def unavailable(exc: Exception, what: str) -> TextboundError:
    """Return the error to raise for an engine failure during `what`."""
    if isinstance(exc, TextboundError):  # already says what is wrong (e.g. a lazy open)
        return exc
    return StoreUnavailableError(
        f"The vector store is unavailable ({what}: {type(exc).__name__}). "
        "Check that Qdrant is running and TEXTBOUND_QDRANT_URL is right; textbound retries on "
        "the next request."
    )


class Engine(Generic[H]):
    """An engine handle `H`, opened now or on first use, and the primitives over it."""

    REOPEN_INTERVAL_S = 1.0
    """A lazy store that failed to open retries at most this often (opening is not free)."""

    def __init__(self, handle: H | None, opener: Callable[[], H] | None = None) -> None:
        self._handle = handle
        self._opener = opener
        self._open_error: StoreUnavailableError | None = None
        self._open_tried = 0.0
        self._lock = threading.RLock()

    # --- the engine primitives (called with the lock held) ---------------------------------
    def _exists(self, h: H) -> bool:
        raise NotImplementedError

    def _create(self, h: H, dimension: int, metadata: dict[str, Any]) -> None:
        raise NotImplementedError

    def _describe(self, h: H) -> tuple[dict[str, Any], int | None, int]:
        """Return (collection metadata, vector size, point count)."""
        raise NotImplementedError

    def _nearest(self, h: H, vector: list[float], k: int) -> list[tuple[str, float]]:
        """Return (id, raw cosine) of the k nearest points, best first."""
        raise NotImplementedError

    def _fused(self, h: H, vector: list[float], sparse: Sparse, k: int,
               candidates: int) -> list[tuple[str, float, float]]:
        """Return (id, raw cosine, fused score) of the k best points, best first.

        The `candidates` nearest points by the dense vector and the `candidates` best by the
        BM25 sparse vector (`textbound.documents.store._sparse`), fused by reciprocal rank fusion.
        """
        raise NotImplementedError

    def _add_sparse(self, h: H) -> None:
        """Give an existing collection the BM25 sparse vector slot (nothing if it has one)."""
        raise NotImplementedError

    def _set_sparse(self, h: H, ids: list[str], vectors: list[Sparse]) -> None:
        """Set these points' BM25 sparse vectors, leaving their dense vectors and payloads."""
        raise NotImplementedError

    def _set_metadata(self, h: H, metadata: dict[str, Any]) -> None:
        """Merge these keys into the collection's metadata."""
        raise NotImplementedError

    def _payloads(self, h: H, ids: list[str], include: list[str] | None = None,
                  exclude: list[str] | None = None) -> list[tuple[str, Payload]]:
        """Return (id, payload) for those ids that exist, payload keys selected."""
        raise NotImplementedError

    def _vectors(self, h: H, ids: list[str]) -> dict[str, list[float]]:
        """Return the stored vectors of those ids that exist."""
        raise NotImplementedError

    def _page(self, h: H, include: list[str], offset: Any) -> tuple[list[tuple[str, Payload]],
                                                                     Any]:
        """Return one scroll page of (id, payload) and the next offset (None at the end)."""
        raise NotImplementedError

    def _count(self, h: H) -> int:
        raise NotImplementedError

    def _write(self, h: H, ids: list[str], vectors: list[list[float]],
               payloads: list[Payload]) -> None:
        """Upsert points: dense vector, payload, and the BM25 sparse vector of the payload."""
        raise NotImplementedError

    def _remove(self, h: H, ids: list[str]) -> None:
        raise NotImplementedError

    def _drop(self, h: H) -> None:
        raise NotImplementedError

    def _release(self, h: H) -> None:
        raise NotImplementedError

    def _optimize(self, h: H) -> None:
        """Build indexes after writes; engines that index in the background need nothing."""

    # --- opening ------------------------------------------------------------------------------
    @property
    def handle(self) -> H:
        """The engine handle, opened on first use for a lazy store."""
        if self._handle is None:
            with self._lock:
                if self._handle is None:
                    self._handle = self._open()
        return self._handle

    def _open(self) -> H:
        if self._opener is None:
            raise StoreUnavailableError("The vector store is closed.")
        now = time.monotonic()
        if self._open_error is not None and now - self._open_tried < self.REOPEN_INTERVAL_S:
            raise StoreUnavailableError(str(self._open_error))
        self._open_tried = now
        try:
            handle = self._opener()
        except StoreUnavailableError as exc:
            self._open_error = exc
            raise
        self._open_error = None
        return handle

    @contextmanager
    def _using(self, what: str) -> Iterator[H]:
        """Hold the lock over one engine call; any failure becomes a TextboundError."""
        try:
            with self._lock:
                yield self.handle
        except Exception as exc:  # noqa: BLE001 - any engine failure means "unavailable"
            raise unavailable(exc, what) from exc

    def close(self) -> None:
        """Release the engine (and the embedded store's lock); later uses raise."""
        with self._lock:
            handle, self._handle, self._opener = self._handle, None, None
        if handle is None:
            return
        try:
            self._release(handle)
        except Exception:  # noqa: BLE001, S110 - closing twice is harmless
            pass
