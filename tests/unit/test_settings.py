from pathlib import Path

import pytest
from pydantic import ValidationError

from graph.context import Context, TunableError, resolve_tunables
from textbound.settings import PACKAGE_ROOT, Settings

from ..conftest import make_settings


def test_defaults_are_embedded_and_offline(tmp_path):
    """Defaults: embedded Qdrant under the data dir, local embeddings, no chat model."""
    s = make_settings(tmp_path)
    assert s.qdrant_url is None and s.qdrant_path == tmp_path / "qdrant"
    assert s.embedding_provider == "local" and s.embedding_model == "all-MiniLM-L6-v2"
    assert s.chat_model is None and s.generator == "extractive"
    assert s.audit_log == tmp_path / "audit.jsonl"
    assert s.calibration_file == PACKAGE_ROOT / "calibration" / "all-MiniLM-L6-v2.json"


def test_environment_overrides_defaults(tmp_path, monkeypatch):
    """TEXTBOUND_* variables override defaults."""
    monkeypatch.setenv("TEXTBOUND_TOP_K", "7")
    monkeypatch.setenv("TEXTBOUND_QDRANT_URL", "http://qdrant.internal:6333")
    s = make_settings(tmp_path)
    assert s.top_k == 7 and s.qdrant_url == "http://qdrant.internal:6333"


def test_dotenv_is_read_and_environment_wins(tmp_path, monkeypatch):
    """.env supplies values; the environment beats .env."""
    env = tmp_path / ".env"
    env.write_text("TEXTBOUND_TOP_K=9\nTEXTBOUND_COLLECTION=from_dotenv\n")
    monkeypatch.setenv("TEXTBOUND_TOP_K", "3")
    s = Settings(_env_file=env, data_dir=tmp_path)  # type: ignore[call-arg]
    assert s.collection == "from_dotenv" and s.top_k == 3


def test_per_run_beats_environment(tmp_path, monkeypatch):
    """Per-run context beats the environment, and context= beats configurable."""
    monkeypatch.setenv("TEXTBOUND_TOP_K", "7")
    s = make_settings(tmp_path)
    assert resolve_tunables(s).top_k == 7
    assert resolve_tunables(s, configurable={"top_k": 4}).top_k == 4
    assert resolve_tunables(s, Context(top_k=2), {"top_k": 4}).top_k == 2


def test_policy_preset_sets_thresholds(tmp_path):
    """Choosing a seed policy loads its fixed thresholds."""
    t = resolve_tunables(make_settings(tmp_path), {"policy": "seed_000"})
    assert (t.floor, t.answer_threshold) == (0.5, 0.7)


def test_out_of_bounds_per_run_value_is_rejected(tmp_path):
    """A per-run value outside its bounds raises TunableError naming the field."""
    with pytest.raises(TunableError, match="top_k"):
        resolve_tunables(make_settings(tmp_path), configurable={"top_k": 0})


def test_invalid_environment_value_fails_loudly(tmp_path, monkeypatch):
    """A malformed setting is a validation error at start-up, not a silent default."""
    monkeypatch.setenv("TEXTBOUND_TOP_K", "lots")
    with pytest.raises(ValidationError, match="top_k"):
        make_settings(tmp_path)


def test_every_setting_has_a_description():
    """Each setting documents itself (the docs/settings.md and README tables come from it)."""
    missing = [n for n, f in Settings.model_fields.items() if not f.description]
    assert missing == []


def test_every_context_field_has_a_description():
    """Studio shows a description for each per-run setting."""
    from dataclasses import fields

    assert all(f.metadata.get("description") for f in fields(Context))


def test_descriptions_say_what_a_setting_does_not_which_seed_asked():
    """Users never saw the seeds: no description users read cites one (preset names may)."""
    import re
    from dataclasses import fields

    seed = re.compile(r"\bseeds?\b(?!_)", re.I)
    texts = [f.description or "" for f in Settings.model_fields.values()]
    texts += [f.metadata["description"] for f in fields(Context)]
    assert [t for t in texts if seed.search(t)] == []


def test_paths_do_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    """Default corpus and calibration paths are absolute, whatever the cwd."""
    monkeypatch.chdir(tmp_path)
    s = make_settings(Path("rel"))
    assert s.corpus_dir.is_absolute() and s.calibration_file.is_absolute()
