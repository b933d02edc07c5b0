"""Schemathesis over the server's own OpenAPI spec: no 5xx, and every response as documented.

`textbound serve` (the real uvicorn socket and config, the ingested textbook, the answerability
reader, an API key) is fuzzed from its `/openapi.json` by schemathesis's engine, the same one
`st run` drives: the examples, coverage and fuzzing phases, valid and invalid data, a fixed seed,
deterministic generation and no example database, so every run sends the same requests. Each
response must not be a 5xx and must match the spec: a documented status code, content type,
headers and body schema (for the streams, every server-sent event). The counts are printed (`-s`)
and added to the reliability case report for RELIABILITY.md.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import VENV_BIN, free_port, run_server, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "schemathesis-test-key-0c41"
SEED = 20240611
MAX_EXAMPLES = 25
"""Fuzzing-phase examples per operation and mode; the coverage phase adds its boundary cases."""
CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_headers_conformance", "response_schema_conformance")


def _config(base_url: str) -> Any:
    import schemathesis

    return schemathesis.Config.from_dict({
        "seed": SEED,
        "base-url": base_url,
        "headers": {"X-API-Key": KEY},
        "workers": 1,
        "request-timeout": 60,
        "continue-on-failure": True,  # count every failure, not the first per operation
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True,
                       "database": "none"},
        # every check off but ours: positive_data_acceptance would, for one, call a 422 for an
        # override that loosens a gate a failure, and that 422 is the point
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        # stateful needs links between operations; this API has none
        "phases": {"examples": {"enabled": True}, "coverage": {"enabled": True},
                   "fuzzing": {"enabled": True}, "stateful": {"enabled": False}},
    })


def _run(base_url: str) -> dict[str, Any]:
    """Run the engine over the served spec; return the counts and the first failures."""
    import schemathesis
    from schemathesis.checks import load_all_checks
    from schemathesis.engine import events, from_schema

    load_all_checks()  # the OpenAPI checks register on import; the CLI imports them, we must too
    schema = schemathesis.openapi.from_url(base_url + "/openapi.json", config=_config(base_url),
                                           headers={"X-API-Key": KEY}, timeout=30)
    operations: set[str] = set()
    cases: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    failures: list[str] = []
    errors: list[str] = []
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            operations.add(recorder.label)
            for interaction in recorder.interactions.values():
                cases[event.phase.value] += 1
                response = interaction.response
                statuses[f"{response.status_code // 100}xx" if response else "no response"] += 1
            for nodes in recorder.checks.values():
                for node in nodes:
                    checks[f"{node.name} {node.status.value}"] += 1
                    if node.failure_info is not None:
                        failures.append(f"{recorder.label}: {node.name}: "
                                        f"{node.failure_info.failure.title}\n"
                                        f"{node.failure_info.code_sample}")
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.message}")
        elif isinstance(event, events.FatalError):
            errors.append(f"fatal: {event.exception!r}")
    return {"operations": sorted(operations), "cases": cases, "statuses": statuses,
            "checks": checks, "failures": failures, "errors": errors}


def test_schemathesis_finds_no_server_error_and_no_spec_mismatch(
        data_dir: Path, tmp_path: Path, cases: Counter[str]) -> None:
    """Seeded, bounded schemathesis run over /openapi.json: 0 5xx, 0 responses off the spec."""
    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--port", str(port), "--log-level", "warning"]
    env = server_env(data_dir, TEXTBOUND_API_KEY=KEY)
    with run_server(cmd, env=env, cwd=tmp_path, port=port, ready_path="/healthz",
                    timeout_s=180, log=tmp_path / "serve.log") as server:
        result = _run(server.url)
        log = server.output()
    total = sum(result["cases"].values())
    failed = len(result["failures"])
    print(f"\n[schemathesis] {len(result['operations'])} operations, {total} cases "
          f"({dict(result['cases'])}), responses {dict(result['statuses'])}, "
          f"{failed} failures, {len(result['errors'])} errors (seed {SEED}, "
          f"{MAX_EXAMPLES} fuzzing examples per operation and mode)")
    cases["schemathesis/cases"] += total
    cases["schemathesis/operations"] += len(result["operations"])
    assert not result["errors"], "\n".join(result["errors"][:5])
    assert failed == 0, f"{failed} failures; the first:\n" + "\n\n".join(result["failures"][:5])
    assert result["statuses"]["5xx"] == 0 and "Traceback" not in log
    assert len(result["operations"]) >= 13 and total >= 500, result
    assert all(result["checks"][f"{name} success"] for name in CHECKS), result["checks"]
