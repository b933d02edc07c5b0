"""The README stays true: its diagram, settings table, paths and make targets match the code."""

import re

from graph.builder import build_graph
from textbound.quality.settings_doc import README_SETTINGS, settings_table
from textbound.settings import PACKAGE_ROOT, Settings

from ..conftest import make_settings

README = (PACKAGE_ROOT / "README.md").read_text()


def test_mermaid_diagram_matches_the_graph(tmp_path, embeddings, fake_store):
    """The diagram is exactly what graph.get_graph().draw_mermaid() draws today."""
    graph = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    block = re.search(r"```mermaid\n(.*?)\n```", README, re.S)
    assert block is not None
    assert block.group(1).strip() == graph.get_graph().draw_mermaid().strip()


def test_settings_tables_are_written_from_the_settings():
    """docs/settings.md lists every setting and the README the main ones, exactly as
    `python -m textbound.quality.settings_doc` writes them from Settings (defaults and
    descriptions)."""
    docs = (PACKAGE_ROOT / "docs" / "settings.md").read_text()
    table = re.search(r"<!-- settings table: [^>]*-->\n(.*?)\n<!-- end of settings table -->",
                      docs, re.S)
    assert table is not None
    assert table.group(1) == settings_table()
    assert all(f"`TEXTBOUND_{n.upper()}`" in table.group(1) for n in Settings.model_fields)
    assert settings_table(README_SETTINGS) in README


def test_every_variable_the_readme_names_is_a_setting():
    """No TEXTBOUND_* variable in the README is misspelt or gone from Settings."""
    named = set(re.findall(r"TEXTBOUND_([A-Z0-9_]+)", README))
    assert named and named <= {n.upper() for n in Settings.model_fields}


def test_named_paths_exist():
    """Files and folders the README names exist in the checkout."""
    for path in re.findall(r"`((?:corpus|notebooks|docs|textbound|graph|nodes|prompts|tests|"
                           r"benchmarks|calibration)/[\w./-]*)`", README):
        assert (PACKAGE_ROOT / path.rstrip("/")).exists(), path
    for link in re.findall(r"\]\(((?:docs|corpus|notebooks)/[^)#]+)\)", README):
        assert (PACKAGE_ROOT / link).exists(), link


def test_make_targets_exist():
    """Every `make X` the README mentions is a Makefile target."""
    makefile = (PACKAGE_ROOT / "Makefile").read_text()
    for target in set(re.findall(r"`make (\w[\w-]*)", README)):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target


def test_benchmark_commands_exist():
    """Every `python -m benchmarks.X` in the README is a module here."""
    for mod in set(re.findall(r"python -m (benchmarks\.\w+)", README)):
        assert (PACKAGE_ROOT / (mod.replace(".", "/") + ".py")).is_file(), mod
