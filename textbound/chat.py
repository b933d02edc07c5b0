"""Build the chat model the settings name.

Any `init_chat_model` string, or an OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio)
through langchain-openai's ChatOpenAI.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from textbound.errors import SetupError

__all__ = ["build_chat_model"]


def build_chat_model(settings: Any) -> BaseChatModel:
    """Return a temperature-0 chat model with the configured timeout; retries are ours."""
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
            timeout=settings.chat_timeout_s,
            max_retries=0,
            max_tokens=settings.chat_max_tokens,  # type: ignore[call-arg]
        )
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name, temperature=0, timeout=settings.chat_timeout_s, max_retries=0,
                               max_tokens=settings.chat_max_tokens)
    except Exception as exc:  # noqa: BLE001 - provider packages raise many kinds
        raise SetupError(
            f"Could not create chat model {name!r} ({type(exc).__name__}). Check the name "
            "(e.g. openai:gpt-4o-mini) and that its API key is set."
        ) from exc
