"""Runtime modules stay small enough to read: a declared limit for every module, a lower one for
a node's own module (the node and little else; the logic it calls lives in textbound/answer/).

Lines are counted as `wc -l` counts them. The limits are declared here and hold for every
module: there is no list of modules let off.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("textbound", "graph", "nodes", "prompts")
"""The packages a running assistant imports (tests, training and research are not counted)."""
MODULE_LINES = 400
"""The most lines a runtime module may have: past it, split it by job."""
NODE_LINES = 150
"""The most lines a node module may have: a module of nodes/ named after its node (no leading
underscore; `_common.py` is the plumbing every node shares, held to MODULE_LINES)."""

MODULES = sorted(p for pkg in RUNTIME for p in (ROOT / pkg).rglob("*.py")
                 if "__pycache__" not in p.parts)
NODE_MODULES = sorted(p for p in (ROOT / "nodes").glob("*.py") if not p.name.startswith("_"))


def _lines(path: Path) -> int:
    """Return the number of lines of a file as `wc -l` counts them (its newlines)."""
    return path.read_bytes().count(b"\n")


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_walk_finds_the_modules() -> None:
    """The modules and the node modules are found (a guard against checking nothing)."""
    names = {_name(p) for p in MODULES}
    assert {"graph/builder.py", "nodes/generate.py", "textbound/answer/compose.py",
            "prompts/__init__.py"} <= names
    assert {p.name for p in NODE_MODULES} >= {"generate.py", "validate_grounding.py",
                                              "score_gate.py", "refuse.py"}
    assert "_common.py" not in {p.name for p in NODE_MODULES}


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_runtime_module_passes_the_limit(path: Path) -> None:
    """A runtime module has at most MODULE_LINES lines."""
    assert _lines(path) <= MODULE_LINES, f"{_name(path)}: {_lines(path)} lines"


@pytest.mark.parametrize("path", NODE_MODULES, ids=_name)
def test_no_node_module_passes_the_node_limit(path: Path) -> None:
    """A node's module has at most NODE_LINES lines: the node, its verdict, little else."""
    assert _lines(path) <= NODE_LINES, f"{_name(path)}: {_lines(path)} lines"


def test_the_count_is_wc_l(tmp_path: Path) -> None:
    """The count is the file's newlines, as `wc -l` gives it."""
    path = tmp_path / "mod.py"
    path.write_text("a = 1\n\nb = 2\n")
    assert _lines(path) == 3
