"""A child process for the turn-kill test: one turn of a thread, SIGKILLing itself at one stage.

    python -m tests.reliability._turn_child STAGE DATA

The turn runs on the SQLite conversations of DATA (`threads.sqlite`) with its audit log in
DATA/audit.jsonl, over a small in-memory book with `HashEmbedder` (no model is loaded). STAGE
names where the process dies with a real SIGKILL: `saving` (the turn is answered, its reply made,
and the checkpoint is about to be saved) or `none` (it runs to the end). The run id is printed
first.
"""

from __future__ import annotations

import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

from graph.builder import build_graph
from textbound import course
from textbound.conversation.threads import ThreadSqliteSaver, turn_options
from textbound.fakes import HashEmbedder, MemoryStore
from textbound.settings import Settings

THREAD = "kill-me"
QUESTION = "What is a ROS 2 service?"
TEXT = ("A ROS 2 service is a request and response call between nodes: the client sends a "
        "request and waits until the server node answers with a response.")


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def main(stage: str, data: Path) -> None:
    """Run one turn; see the module docstring."""
    embeddings = HashEmbedder(32)
    store = MemoryStore.holding(embeddings, [("c-service", TEXT, {  # type: ignore[arg-type]
        "source": "book.md", "section": "Book > Services", "title": "Book",
        "heading_path": ["Book", "Services"], "start": 0, "end": len(TEXT)})], collection="fake")
    saver = ThreadSqliteSaver.open(data / "threads.sqlite")
    put = saver.put

    def armed(*args: Any, **kwargs: Any) -> Any:
        if stage == "saving":
            _die()
        return put(*args, **kwargs)

    saver.put = armed  # type: ignore[method-assign]
    settings = Settings(_env_file=None, data_dir=data,  # type: ignore[call-arg]
                        audit_log=data / "audit.jsonl")
    graph = build_graph(settings=settings, embeddings=embeddings, store=store,
                        profile=course.load_profile(), checkpointer=saver)
    run_id = str(uuid.uuid4())
    print(run_id, flush=True)
    graph.invoke({"question": QUESTION},
                 {"configurable": {"thread_id": THREAD}, "run_id": run_id},
                 **turn_options(graph))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
