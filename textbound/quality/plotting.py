"""matplotlib for the PNG plots of `textbound eval` and `textbound report`, an optional extra.

Answering, ingesting and serving never plot, so matplotlib is not a dependency of the package:
it comes with `pip install 'textbound[reports]'`, which `make setup` installs. It is imported
only when a plot is drawn, and its absence is a SetupError that names the extra.
"""

from __future__ import annotations

from typing import Any

from textbound.errors import SetupError

REPORTS_EXTRA = "pip install 'textbound[reports]'"
"""The install command that brings matplotlib (the `reports` extra in pyproject.toml)."""


def pyplot() -> Any:
    """Return `matplotlib.pyplot`, drawing to files only (the Agg backend).

    Raises SetupError naming the `reports` extra when matplotlib is not installed; commands
    that plot call it before their work too, so they fail at once rather than at the end.
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise SetupError("the report's plots need matplotlib, which is not installed; it comes "
                         f"with the reports extra: {REPORTS_EXTRA}") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
