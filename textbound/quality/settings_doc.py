"""The settings table the docs show, written from `Settings` itself so it cannot drift.

    python -m textbound.quality.settings_doc            # every setting: the table in
    docs/settings.md python -m textbound.quality.settings_doc --readme   # the README's short table
    of the main ones

tests/unit/test_readme.py checks that both tables in the repository are what this prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from textbound.settings import Settings

__all__ = ["README_SETTINGS", "settings_table"]

README_SETTINGS = ("data_dir", "store", "qdrant_url", "collection", "profile",
                   "embedding_provider", "generator", "chat_model", "chat_base_url", "policy",
                   "answerability", "api_key")
"""The settings the README's short table shows; docs/settings.md has all of them."""

_SHOWN_DEFAULTS = {
    "data_dir": "~/.local/share/textbound ($XDG_DATA_HOME/textbound)",
    "corpus_dir": "the bundled corpus/",
}
"""Defaults computed on the machine, shown as the rule that computes them."""


def _shown(name: str, value: Any) -> str:
    if name in _SHOWN_DEFAULTS:
        return _SHOWN_DEFAULTS[name]
    if value is None or value == []:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def settings_table(names: tuple[str, ...] | None = None) -> str:
    """Return the Markdown table of these settings, in the order given.

    By default every setting, in `Settings`' order: the per-run tunables come last.
    """
    fields = Settings.model_fields
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name in names if names is not None else tuple(fields):
        info = fields[name]
        default = info.default_factory() if info.default_factory else info.default  # type: ignore[call-arg]
        meaning = " ".join((info.description or "").split()).replace("|", "\\|")
        rows.append(f"| `TEXTBOUND_{name.upper()}` | {_shown(name, default)} | {meaning} |")
    return "\n".join(rows)


def main() -> None:
    """Print a settings table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--readme", action="store_true", help="only the README's main settings")
    args = ap.parse_args()
    print(settings_table(README_SETTINGS if args.readme else None))


if __name__ == "__main__":
    main()
