"""The compiled graph that LangGraph Studio (`langgraph dev`, see langgraph.json) serves.

`graph.app` builds its graph lazily through a module `__getattr__`, which the Agent Server's
loader cannot see (it reads the module's namespace), and calling `get_graph` as a factory would
build the graph inside the server's event loop, which `langgraph dev` rejects as blocking I/O.
Importing this module builds it once, in the loader's worker thread, from the TEXTBOUND_*
settings (langgraph.json loads `.env`).
"""

from __future__ import annotations

from graph.app import get_graph

__all__ = ["graph"]

graph = get_graph(threads=False)  # the Agent Server keeps threads in its own checkpointer
