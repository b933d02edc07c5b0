"""The module-level compiled graph for langgraph.json, LangServe, notebooks and the CLI.

Built on first access, from the settings (`TEXTBOUND_*` / `.env`), so importing this module is
cheap and tests that build their own graph never open the default store.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

__all__ = ["get_graph"]

_lock = threading.Lock()
_graph: Any = None


def get_graph(*, threads: bool = True) -> Any:
    """Return the process-wide compiled graph, building it once.

    It keeps conversations in the checkpointer TEXTBOUND_CHECKPOINTER names (SQLite in the
    data folder by default; textbound/conversation/threads.py). `threads=False` builds it without
    one, for LangGraph Studio, whose server lends its own.
    """
    global _graph
    with _lock:
        if _graph is None:
            from graph.builder import build_graph, build_services
            from textbound.conversation.threads import open_checkpointer

            services = build_services()
            # close the embedded store before interpreter teardown (qdrant-client's __del__
            # otherwise runs after its imports are gone and prints an ImportError)
            atexit.register(services.store.close)
            checkpointer = open_checkpointer(services.settings) if threads else None
            if checkpointer is not None and hasattr(checkpointer, "close"):
                atexit.register(checkpointer.close)
            _graph = build_graph(services=services, checkpointer=checkpointer)
        return _graph


def __getattr__(name: str) -> Any:
    if name == "graph":
        return get_graph()
    raise AttributeError(name)
