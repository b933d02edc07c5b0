"""Deterministic stand-ins for every seam of `textbound.seams`, for our tests and users' tests.

`HashEmbedder` (Embedder), `ScriptedChatModel` (ChatModel) and `MemoryAudit` (AuditSink) are
defined here; `MemoryStore` (Store, textbound.documents.store.memory) and `FakeReader`
(AnswerReader, textbound.answer.answerability) live beside their real versions and are re-exported,
as is
`FixedProfile` (ProfileSource), which is production's own source for a fixed profile
(textbound.documents.profile). None of them loads a model or opens a connection. Production code
never imports this module (tests/unit/test_imports.py checks it).

`MemoryStore.holding(embeddings, passages)` is a store holding a few passages in one call, and
`store.fail("search", StoreUnavailableError(...))` makes one of its methods fail as a store that
went away does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from textbound.answer.answerability import FakeReader
from textbound.documents.profile import FixedProfile
from textbound.documents.store.memory import MemoryStore

__all__ = ["FakeReader", "FixedProfile", "HashEmbedder", "MemoryAudit", "MemoryStore",
           "ScriptedChatModel"]


class HashEmbedder:
    """Unit vectors drawn from a seed that is the text's hash: equal texts, equal vectors.

    Unrelated texts get near-orthogonal vectors, so it tests plumbing, not meaning.
    """

    def __init__(self, dimension: int = 16, model_name: str | None = None) -> None:
        self.dimension = dimension
        self.model_name = model_name or f"hash-{dimension}"

    def embed_query(self, text: str) -> list[float]:
        """Return the text's vector."""
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dimension)
        vector: list[float] = (v / np.linalg.norm(v)).astype(np.float32).tolist()
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Return one vector per text."""
        return [self.embed_query(t) for t in texts]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers each call with the next scripted step (the last repeats).

    A step is an AIMessage, a callable (messages -> AIMessage) or an exception to raise.
    `calls` counts the calls and `seen` keeps their messages. `bind_tools` returns the model
    itself, so `with_structured_output` works (LangChain's own fakes raise there).
    """

    steps: list[Any]
    calls: int = 0
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Return the model itself: the scripted steps already are the tool calls."""
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        self.seen.append(list(messages))
        if isinstance(step, BaseException):
            raise step
        message = step(messages) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


@dataclass
class MemoryAudit:
    """An audit sink that keeps each record in `records` (or refuses them with `broken`)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    broken: bool = False
    """Reject every write, as a log on a full or read-only disk does."""

    def write(self, record: dict[str, Any]) -> bool:
        """Keep the record; return False when broken."""
        if self.broken:
            return False
        self.records.append(dict(record))
        return True

    def check(self) -> dict[str, object]:
        """Report health as AuditLog.check does."""
        return {"ok": not self.broken, "enabled": True}
