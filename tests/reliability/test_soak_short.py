"""A short soak of `textbound serve` (benchmarks/soak.py): mixed requests from 8 clients.

120 requests in `make test`, 300 under --full-size (`make test-full`, which CI runs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks.soak import run
from tests.conftest import sized

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.sized]

REQUESTS = sized(120, 300)


def test_short_soak_loses_nothing(tmp_path: Path, cases: Counter[str]) -> None:
    """Zero 5xx, every graph request audited once, memory flat after warm-up."""
    result = run(requests=REQUESTS, clients=8, warmup=60, max_drift=0.25, work=tmp_path)
    cases["load/short_soak_requests"] += result["requests"]
    assert result["failures"] == 0, result["failure_examples"]
    assert result["server_errors"] == 0 and result["statuses"].get("500") is None
    assert result["audit_lost"] == 0 and result["audit_malformed"] == 0, result
    assert result["graph_requests"] < result["requests"]  # rejected bodies were not audited
    assert set(result["statuses"]) <= {"200", "413", "422"}
    assert result["rss_drift"] <= 0.25, result
    assert result["tracebacks_in_server_log"] == 0
