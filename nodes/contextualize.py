"""contextualize: make a follow-up question standalone before retrieval and every gate read it.

With a thread's earlier turns, a question that depends on them ("What file defines its
interface?", "Why?", "And a topic?") is rewritten: by rule (textbound/conversation/rewrite.py) with
the extractive generator; with the chat generator the model rewrites it (prompts/contextualize.txt),
falling back to the rule's rewrite when the model fails, is late or answers with something that
is not one question. A question the rules find nothing to resolve in is never rewritten, and
never sent to the model. The node never refuses: the gates after it judge the standalone question
exactly as they judge any other.
"""

from __future__ import annotations

import re
import threading
from typing import Any, cast

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import Conversation, State, Turn
from nodes._common import timed
from prompts import contextualize_prompt_template
from textbound.conversation.rewrite import Rewrite, rewrite
from textbound.providers.chat import ChatClient
from textbound.text import clean_text

__all__ = ["contextualize", "model_rewrite"]

_MARKERS = re.compile(r"\s*\[\d+\]")
_MODEL_TURNS = 4
"""Earlier turns shown to the model (the newest)."""
_MODEL_WAIT_S = 30.0
"""Most seconds the rewrite waits for the model (less when the chat deadline is shorter)."""


def _history_text(history: list[Turn]) -> str:
    lines = []
    for turn in history[-_MODEL_TURNS:]:
        lines.append(f"Student: {turn['standalone']}")
        answer = "(the book does not answer this)" if turn["was_refusal"] else turn["answer"]
        lines.append("Answer: " + _MARKERS.sub("", answer)[:400])
    return "\n".join(lines)


def model_rewrite(question: str, history: list[Turn], chat: ChatClient) -> str | None:
    """Return the chat model's standalone form of `question`, or None when it gave none.

    One call, no retry, within the smaller of the chat deadline and 30 s, holding one of the
    chat slots; a reply that is not a single question of sane length counts as none.
    """
    if not chat.guard.acquire():
        return None
    prompt = contextualize_prompt_template().format(history=_history_text(history),
                                                     question=question)
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def call() -> None:
        try:
            outcome["text"] = cast(Any, chat.model).invoke(prompt).content
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the rule
            outcome["error"] = exc
        finally:
            chat.guard.release()
            done.set()

    threading.Thread(target=call, name="contextualize-call", daemon=True).start()
    if not done.wait(min(chat.deadline_s, _MODEL_WAIT_S)) or "text" not in outcome:
        return None
    text = outcome["text"]
    if not isinstance(text, str):
        return None
    text = clean_text(text).strip().strip('"').strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].endswith("?") or not 3 <= len(lines[0]) <= 400:
        return None
    return lines[0]


@timed
def contextualize(state: State, runtime: Runtime[RunContext], *,
                  chat: ChatClient | None = None) -> dict[str, Any]:
    """Rewrite a follow-up into a standalone question; leave a standalone one as it is."""
    tun = runtime.context
    asked = state["clean_question"]
    history: list[Turn] = list(state.get("history") or []) if tun.thread_id else []
    found: Rewrite = rewrite(asked, cast(list[dict[str, Any]], history))
    standalone, rule = found.standalone, found.rule
    if rule is not None and tun.generator == "chat" and chat is not None:
        by_model = model_rewrite(asked, history, chat)
        if by_model is not None:
            standalone, rule = by_model, "model"
    conversation: Conversation = {
        "thread_id": tun.thread_id, "turn": len(history) + 1, "asked": asked,
        "standalone": standalone, "rewritten": rule is not None, "rule": rule,
        "subject": found.subject,
    }
    update: dict[str, Any] = {"conversation": conversation}
    if rule is not None:
        update["clean_question"] = standalone
    return update
