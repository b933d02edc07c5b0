"""matplotlib is the optional `reports` extra: without it, plotting names the extra to install."""

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textbound.errors import SetupError
from textbound.quality.plotting import REPORTS_EXTRA, pyplot

INSTALL = "pip install 'textbound[reports]'"


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `import matplotlib` fail, as when the extra is not installed."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_pyplot_is_agg_when_matplotlib_is_installed() -> None:
    plt = pyplot()
    assert plt.get_backend().lower() == "agg"


@pytest.mark.usefixtures("no_matplotlib")
def test_without_matplotlib_the_error_names_the_reports_extra() -> None:
    assert REPORTS_EXTRA == INSTALL
    with pytest.raises(SetupError) as caught:
        pyplot()
    assert INSTALL in str(caught.value)


@pytest.mark.usefixtures("no_matplotlib")
def test_both_plot_writers_raise_it(tmp_path: Path) -> None:
    from textbound.quality.analytics.plots import write_plots as report_plots
    from textbound.quality.evaluation.plots import write_plots as eval_plots

    with pytest.raises(SetupError, match=r"textbound\[reports\]"):
        report_plots(tmp_path, None, [])  # type: ignore[arg-type]
    with pytest.raises(SetupError, match=r"textbound\[reports\]"):
        eval_plots({"records": {}, "report": {}}, tmp_path, "t")


@pytest.mark.usefixtures("no_matplotlib")
def test_report_and_eval_stop_at_once_naming_the_extra(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2 with the install command before reading the log or running any question."""
    from textbound.serving.cli import app

    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    log = tmp_path / "audit.jsonl"
    log.write_text("{}\n")
    runner = CliRunner()
    for args in (["report", "--audit", str(log), "--out", str(tmp_path / "report")],
                 ["eval", "--out", str(tmp_path / "eval")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert INSTALL in " ".join(result.output.split()), result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "report").exists() and not (tmp_path / "eval").exists()


def test_the_core_and_the_cli_import_without_matplotlib() -> None:
    """Answering, ingesting, serving and the CLI load no matplotlib: it is only the plots'."""
    import subprocess

    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import graph.builder, textbound.serving.cli, textbound.documents.ingest,"
            " textbound.serving.server\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr[-3000:]
