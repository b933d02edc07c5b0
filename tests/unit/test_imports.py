"""Every package and module imports on its own, and the imports between them form no circle.

Two kinds of check:

* each package and each module of textbound/, graph/, nodes/ and prompts/ is imported alone in a
  fresh interpreter (`python -c "import X"`), so an import that only works when something else
  was imported first, or a circle that bites only from one entry point, fails here;
* the imports are read with `ast` (nothing is executed) into a graph of our own modules:
  - counting only module-level imports (those run when the module is imported; imports under
    `if TYPE_CHECKING:` are left out, imports inside functions are left out), the graph is acyclic;
  - counting imports inside functions too, the answering path (graph.builder, graph.app and
    everything they reach) never reaches an application module (evaluation, experiments,
    analytics, calibration, CLI, server): that is how the circle builder -> nodes -> _common ->
    tracing -> evaluation -> builder was closed, through two lazy imports;
  - counting imports inside functions too, the graph is still acyclic: no module imports one that
    imports it back, even lazily (the store's _base -> _langchain -> memory -> _base was one);
  - counting every import (module level, under `if TYPE_CHECKING:` and inside functions), each
    module imports only modules of its own layer or lower ones (`LAYERS`, `GROUPS`), the graph
    is still acyclic, and no production module imports the test fakes (`textbound.fakes`);
* every package under textbound/ is listed in pyproject's `packages`, so an install has it.

An edge goes to the module an import names: `from P import name` counts as an import of `P.name`
when that is a module, else of `P`. Parent packages are not edges: Python initialises them first.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("textbound", "graph", "nodes", "prompts")
APPLICATIONS = ("textbound.quality", "textbound.serving", "textbound.documents.uploads")
"""Modules (and packages, with everything under them) around the core that answers."""
ANSWERING_PATH = ("graph.builder", "graph.app")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


MODULES = _modules()


def _imports(name: str, path: Path, *, lazy: bool, typing: bool = False) -> set[str]:
    """Our modules that `name` imports: at module level, plus inside functions when `lazy`,
    plus under `if TYPE_CHECKING:` when `typing`."""
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if lazy:
                    visit(child)
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body if typing else []:
                    visit(ast.Module(body=[stmt], type_ignores=[]))
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]))
                continue
            if isinstance(child, ast.Import):
                found.extend(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = base.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    mod = ".".join(parts + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                for alias in child.names:
                    sub = f"{mod}.{alias.name}"
                    found.append(sub if sub in MODULES else mod)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in MODULES and m != name}


def _graph(*, lazy: bool, typing: bool = False) -> dict[str, set[str]]:
    return {m: _imports(m, p, lazy=lazy, typing=typing) for m, p in MODULES.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one cycle of the graph (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := walk(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := walk(m)):
            return found
    return None


def test_the_module_list_is_complete() -> None:
    """The walk finds the packages and their modules (a guard against checking nothing)."""
    assert {"textbound", "graph", "nodes", "prompts", "graph.builder", "nodes._common",
            "textbound.records.tracing", "textbound.documents.store"} <= set(MODULES)


STORE = "textbound.documents.store"
STORE_MODULES = (STORE, *(f"{STORE}.{m}" for m in ("_base", "_edge", "_engine", "_langchain",
                                                    "_migrate", "_qdrant", "_sparse", "_terms",
                                                    "_types", "memory")))


def test_every_store_module_is_checked() -> None:
    """The store package's modules are all in the walk (imported alone, counted in the graph)."""
    found = {m for m in MODULES if m == STORE or m.startswith(STORE + ".")}
    assert found == set(STORE_MODULES)


def test_module_level_imports_form_no_circle() -> None:
    """Imports run at import time (functions' lazy imports not counted) form no cycle."""
    assert _cycle(_graph(lazy=False)) is None


def test_lazy_imports_form_no_circle_either() -> None:
    """Counting imports inside functions too, no module imports one that imports it back."""
    assert _cycle(_graph(lazy=True)) is None


def test_the_store_modules_import_in_layers() -> None:
    """Within the store package, counting lazy imports: each module imports only lower ones."""
    graph = _graph(lazy=True)
    inside = {m: {n for n in graph[m] if n in STORE_MODULES} for m in STORE_MODULES}
    assert _cycle(inside) is None, inside


def test_every_package_is_installed() -> None:
    """pyproject's explicit `packages` list names every package of textbound/ (else a wheel
    install lacks it while the editable one works)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert packages - listed == set()


def test_the_answering_path_never_imports_an_application() -> None:
    """Counting lazy imports too, graph.builder and graph.app reach no application module."""
    graph = _graph(lazy=True)
    reached: dict[str, str] = {}  # module -> the module that first imported it
    todo = [(m, "") for m in ANSWERING_PATH]
    while todo:
        m, via = todo.pop()
        if m in reached:
            continue
        reached[m] = via
        todo.extend((n, m) for n in graph[m])
    apps = {m: v for m, v in reached.items()
            if any(m == a or m.startswith(a + ".") for a in APPLICATIONS)}
    assert apps == {}, f"imported by the answering path (module: importer): {apps}"


LAYERS = ("kernel", "documents, providers, records", "answer, conversation", "graph state",
          "nodes", "graph wiring", "serving, quality", "test support")
"""The layers, lowest first: a module may import its own layer and the ones below it, never one
above. `GROUPS` says which layer each package (or module) is in."""
(KERNEL, DOCUMENTS, ANSWER, GRAPH_STATE, NODES, WIRING, APPS, TEST_SUPPORT) = range(len(LAYERS))

GROUPS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (KERNEL, "errors, settings, tunables, the seams and the plain values they name; the shapes "
     "the answer rules and the graph's state share (passages, drafts, sources, turns); plain "
     "text, answer units and what a question asks for (ingestion stores units, the nodes quote "
     "them)",
     ("textbound", "textbound.errors", "textbound.settings", "textbound.tunables",
      "textbound.seams", "textbound.shapes", "textbound.course", "textbound.text",
      "textbound.documents.store._types", "prompts")),
    (DOCUMENTS, "documents and storage: the store, ingestion, PDF parsing, upload jobs, names, "
     "the profile in force",
     ("textbound.documents",)),
    (DOCUMENTS, "model providers: embeddings, chat clients, the local chat model",
     ("textbound.providers",)),
    (DOCUMENTS, "records: the audit log, ratings, traces, access keys, the courses that keep them "
     "apart; conversation checkpoints",
     ("textbound.records", "textbound.conversation.threads",
      "textbound.conversation.threads_postgres", "textbound.conversation.threaded_saver")),
    (ANSWER, "the answer rules nodes call, and the conversation's rewrite rules",
     ("textbound.answer", "textbound.conversation")),
    (GRAPH_STATE, "what every node shares: the state and its verdicts, the reasons, the context",
     ("graph", "graph.state", "graph.reasons", "graph.context")),
    (NODES, "the nodes and the helpers only nodes use", ("nodes",)),
    (WIRING, "the wiring: routers, the services, the builder and the module-level graph",
     ("graph.routers", "graph.services", "graph.builder", "graph.app")),
    (APPS, "serving: the HTTP server, the reader page, the command line, Studio's entry",
     ("textbound.serving",)),
    (APPS, "quality: evaluation, calibration, analytics and the tools around them",
     ("textbound.quality",)),
    (TEST_SUPPORT, "the fakes: stand-ins for tests, built on the real modules they imitate",
     ("textbound.fakes",)),
)
"""Which layer each module or package (with everything under it) is in, with why, in groups."""

FAKES = "textbound.fakes"


def _layer(module: str) -> int | None:
    """Return the layer of the longest entry of `GROUPS` that is `module` or a package above it."""
    entries = {name: layer for layer, _, names in GROUPS for name in names}
    for prefix in sorted(entries, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return entries[prefix]
    return None


def test_every_module_has_a_layer() -> None:
    """A new module is placed in `GROUPS` (else the layer check would not see it)."""
    assert [m for m in MODULES if _layer(m) is None] == []


def test_the_layer_table_names_only_real_modules() -> None:
    """Every entry of `GROUPS` is one of our modules or packages, each named once."""
    names = [n for _, _, group in GROUPS for n in group]
    assert [n for n in names if n not in MODULES] == []
    assert len(names) == len(set(names))


def test_no_module_imports_a_higher_layer() -> None:
    """Counting every import (module level, TYPE_CHECKING, inside functions), arrows run down."""
    graph = _graph(lazy=True, typing=True)
    upward = sorted(f"{m} ({LAYERS[_layer(m) or 0]}) -> {n} ({LAYERS[_layer(n) or 0]})"
                    for m, found in graph.items() for n in found
                    if (_layer(m) or 0) < (_layer(n) or 0))
    assert upward == [], "imports of a higher layer:\n" + "\n".join(upward)


def test_every_import_together_forms_no_circle() -> None:
    """Counting TYPE_CHECKING imports too (a type-only circle is still a circle), no cycle."""
    assert _cycle(_graph(lazy=True, typing=True)) is None


def test_no_production_module_imports_the_fakes() -> None:
    """The fakes are for tests: no module but the fakes themselves imports them, even lazily."""
    graph = _graph(lazy=True, typing=True)
    assert FAKES in MODULES
    assert sorted(m for m, found in graph.items() if FAKES in found and m != FAKES) == []


def test_the_layer_check_sees_an_upward_arrow_under_type_checking(tmp_path: Path) -> None:
    """A type-only import counts: the walk reads `if TYPE_CHECKING:` blocks and function bodies."""
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from graph.builder import build_graph\n"
                      "def f():\n    from textbound.fakes import HashEmbedder\n")
    assert _imports("textbound.text", source, lazy=True, typing=True) == {"graph.builder",
                                                                           FAKES}
    assert _imports("textbound.text", source, lazy=False) == set()


def test_no_module_imports_a_private_langgraph_name() -> None:
    """LangGraph's private modules and names (`langgraph._internal`, `_X`) change on upgrades."""
    private: list[str] = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            private += [f"{name}: {n}" for n in names if n.split(".")[0] == "langgraph"
                        and any(part.startswith("_") for part in n.split(".")[1:])]
    assert private == []


_FORK_EACH = r"""
import importlib, os, sys, traceback
for lib in sys.argv[1].split(","):  # third-party only: shared by every child, ours never are
    try:
        importlib.import_module(lib)
    except Exception:
        pass
failed = 0
for module in sys.argv[2].split(","):
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException:
            sys.stderr.write(f"--- import {module}:\n{traceback.format_exc()}\n")
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    failed += os.waitpid(pid, 0)[1] != 0
sys.exit(1 if failed else 0)
"""


def _third_party() -> list[str]:
    """Top-level third-party packages our modules import at module level."""
    names: set[str] = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in PACKAGES and n not in sys.stdlib_module_names
                  and n != "__future__")


def test_each_module_imports_alone_in_a_fresh_interpreter() -> None:
    """Every package and module imports alone: each in its own process, none imported before.

    One interpreter loads the third-party libraries once, then forks a child per module (as
    `python -c "import X"` would, without paying the libraries' import time fifty times); no
    module of textbound/, graph/, nodes/ or prompts/ is loaded before the fork.
    """
    env = dict(os.environ, LANGSMITH_TRACING="false", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, "-c", _FORK_EACH, ",".join(_third_party()),
                           ",".join(sorted(MODULES))], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
