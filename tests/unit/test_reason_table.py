"""graph/reasons.py declares each refusal reason once; every reason used is declared, and every
reason declared is emitted by its gate and reachable in the graph."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from graph.builder import build_graph
from graph.reasons import REASONS, RefusalReason, fired_by
from textbound.settings import PACKAGE_ROOT

from ..conftest import make_settings

RUNTIME = ("textbound", "graph", "nodes", "prompts")
NODES = sorted((PACKAGE_ROOT / "nodes").glob("*.py"))
GATES = sorted({g for spec in REASONS.values() for g in spec.gates})


@functools.cache
def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), str(path))


_BY_NAME = {r.name: r for r in RefusalReason}
_BY_STRING = {**{r.value: r for r in RefusalReason}, **{r.node: r for r in RefusalReason}}


def _reasons_named(tree: ast.AST) -> set[RefusalReason]:
    """The reasons a module names in code: `RefusalReason.X`, or "x" / "refuse_x" as a string."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _BY_NAME:
            found.add(_BY_NAME[node.attr])
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value in _BY_STRING:
            found.add(_BY_STRING[node.value])
    return found


@functools.cache
def _reasons_in_file(path: Path) -> frozenset[RefusalReason]:
    """The reasons one module names, read once a run (each reason's case reads every module)."""
    return frozenset(_reasons_named(_tree(path)))


def _defined_in(gate: str) -> Path:
    for path in NODES:
        if any(isinstance(n, ast.FunctionDef) and n.name == gate for n in ast.walk(_tree(path))):
            return path
    raise AssertionError(f"no function {gate} in nodes/")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, embeddings):
    from tests.conftest import book_store

    graph = build_graph(settings=make_settings(tmp_path_factory.mktemp("g")),
                        embeddings=embeddings, store=book_store(embeddings))
    return graph.get_graph()


def test_every_reason_a_node_names_is_declared_for_a_gate_of_that_module():
    """A gate that fires a reason the table does not give it fails here (and at run time)."""
    gates_in: dict[Path, set[str]] = {}
    for gate in GATES:
        gates_in.setdefault(_defined_in(gate), set()).add(gate)
    for path in NODES:
        named = set(_reasons_in_file(path))
        declared = set(fired_by(*gates_in.get(path, set())))
        assert named <= declared, (path.name, sorted(named - declared))


@pytest.mark.parametrize("reason", list(RefusalReason), ids=[r.value for r in RefusalReason])
def test_every_declared_reason_is_emitted_and_reachable(reason, drawn):
    """Each gate the table names exists, names the reason, and can reach its terminal."""
    edges: dict[str, set[str]] = {}
    for e in drawn.edges:
        edges.setdefault(e.source, set()).add(e.target)
    assert reason.node in drawn.nodes
    for gate in reason.spec.gates:
        assert gate in drawn.nodes, gate
        assert reason in _reasons_in_file(_defined_in(gate)), (gate, "never names it")
        seen, todo = set(), [gate]
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(edges.get(node, ()))
        in_place = edges.get(gate) == {"__end__"}  # a reply node refusing instead of replying
        assert reason.node in seen or in_place, (gate, "cannot reach", reason.node)


@pytest.mark.parametrize("reason", list(RefusalReason), ids=[r.value for r in RefusalReason])
def test_a_reason_is_named_only_by_its_declaration_its_gates_and_one_more_module(reason):
    """Its declaration, the gates that emit it, and at most one more module."""
    modules = {str(f.relative_to(PACKAGE_ROOT)) for pkg in RUNTIME
               for f in (PACKAGE_ROOT / pkg).rglob("*.py") if reason in _reasons_in_file(f)}
    gates = {str(_defined_in(g).relative_to(PACKAGE_ROOT)) for g in reason.spec.gates}
    assert "graph/reasons.py" in modules
    assert len(modules - gates - {"graph/reasons.py"}) <= 1, sorted(modules)


def test_the_usage_step_table_lists_each_gates_reasons_from_the_table():
    """docs/usage.md's refusal column is what graph/reasons.py declares for each step."""
    text = (PACKAGE_ROOT / "docs" / "usage.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|.*\| ((?:`\w+`(?:, )?)+) \|$", text, re.M)
    listed = {step: re.findall(r"`(\w+)`", reasons) for step, reasons in rows}
    assert set(listed) == set(GATES)
    for step, reasons in listed.items():
        assert reasons == [r.value for r in fired_by(step)], step
