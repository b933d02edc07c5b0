"""Build the chat model the settings name, and bound how many of its calls are in flight.

Any `init_chat_model` string, or an OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio)
through langchain-openai's ChatOpenAI.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from textbound.errors import SetupError
from textbound.seams import ChatModel
from textbound.settings import Settings

__all__ = ["ChatClient", "ChatGuard", "attempt_timeout", "build_chat_model", "chat_deadline"]


def chat_deadline(settings: Settings) -> float:
    """Return the most seconds one question waits for the chat model, retries included."""
    attempts = 1 + int(settings.chat_max_retries)
    return min(float(getattr(settings, "chat_deadline_s", 1e9)),
               attempts * float(settings.chat_timeout_s))


def attempt_timeout(settings: Settings) -> float:
    """Return one attempt's client timeout: attempts x this never exceeds chat_deadline_s."""
    attempts = 1 + int(settings.chat_max_retries)
    deadline = float(getattr(settings, "chat_deadline_s", attempts * settings.chat_timeout_s))
    return min(float(settings.chat_timeout_s), deadline / attempts)


class ChatGuard:
    """Hold the chat-call slots and how the latest calls went (what `/healthz` reports).

    A slot is taken before a call and given back only when the call has really ended, so a model
    that hangs past every timeout ties up at most `limit` threads; a question that finds no free
    slot is refused at once instead of queueing.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.calls = 0
        self.busy_refusals = 0
        self.consecutive_failures = 0
        self.last_error: str | None = None
        self.last_ok_at: float | None = None

    def acquire(self) -> bool:
        """Take a slot if one is free (never waits); count the refusal otherwise."""
        if not self._slots.acquire(blocking=False):
            with self._lock:
                self.busy_refusals += 1
            return False
        with self._lock:
            self.in_flight += 1
            self.calls += 1
        return True

    def release(self) -> None:
        """Give back a slot once its call has ended, however it ended."""
        with self._lock:
            self.in_flight -= 1
        self._slots.release()

    def record(self, error: str | None) -> None:
        """Remember whether the latest question got an answer from the model."""
        with self._lock:
            if error is None:
                self.consecutive_failures, self.last_error = 0, None
                self.last_ok_at = time.time()
            else:
                self.consecutive_failures += 1
                self.last_error = error

    def check(self) -> dict[str, Any]:
        """Report the model as failing after a failed question, or when every slot is taken."""
        with self._lock:
            report: dict[str, Any] = {
                "ok": self.consecutive_failures == 0 and self.in_flight < self.limit,
                "in_flight": self.in_flight, "limit": self.limit,
                "consecutive_failures": self.consecutive_failures,
                "busy_refusals": self.busy_refusals}
            if self.consecutive_failures:
                report["error"] = f"the latest chat call failed: {self.last_error}"
            elif self.in_flight >= self.limit:
                report["error"] = "every chat call slot is taken (the model is slow or hung)"
        return report


@dataclass
class ChatClient:
    """A chat model with what generate needs to call it: retries, one deadline, its slots.

    Built once per graph from the settings (`from_settings`); the server's `/healthz` reads the
    same `guard`, so it reports the calls this graph makes.
    """

    model: ChatModel
    max_retries: int = 2
    deadline_s: float = 60.0
    structured_method: str | None = None
    guard: ChatGuard = field(default_factory=lambda: ChatGuard(4))
    stream: bool = False
    """Stream the answer, so the deadline can close the connection and the server stops
    generating. On with function calling, the method llama.cpp's server needs (it streams);
    off otherwise, since not every OpenAI-compatible server streams structured output."""

    @classmethod
    def from_settings(cls, model: ChatModel, settings: Settings) -> ChatClient:
        """Wrap `model` with the retry, deadline and concurrency the settings give."""
        return cls(model=model, max_retries=int(settings.chat_max_retries),
                   deadline_s=chat_deadline(settings),
                   structured_method=getattr(settings, "chat_structured_method", None),
                   guard=ChatGuard(int(getattr(settings, "chat_max_concurrency", 4))),
                   stream=getattr(settings, "chat_structured_method", None) == "function_calling")


def build_chat_model(settings: Settings) -> BaseChatModel:
    """Return a temperature-0 chat model with one attempt's timeout; retries are ours."""
    name = settings.chat_model
    if not name:
        raise SetupError("No chat model configured: set TEXTBOUND_CHAT_MODEL.")
    if settings.chat_base_url:
        from langchain_openai import ChatOpenAI

        key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else "not-needed"
        return ChatOpenAI(
            model=name.split(":", 1)[1] if name.startswith("openai:") else name,
            base_url=settings.chat_base_url,
            api_key=key,  # type: ignore[arg-type]
            temperature=0,
            timeout=attempt_timeout(settings),
            max_retries=0,
            max_tokens=settings.chat_max_tokens,  # type: ignore[call-arg]
        )
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name, temperature=0, timeout=attempt_timeout(settings),
                               max_retries=0, max_tokens=settings.chat_max_tokens)
    except Exception as exc:  # noqa: BLE001 - provider packages raise many kinds
        raise SetupError(
            f"Could not create chat model {name!r} ({type(exc).__name__}). Check the name "
            "(e.g. openai:gpt-4o-mini) and that its API key is set."
        ) from exc
