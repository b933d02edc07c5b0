import json
import threading

from textbound.records.audit import AuditLog


def test_concurrent_writes_never_interleave(tmp_path):
    """32 threads x 50 large records: every line is whole, none lost."""
    log = AuditLog(tmp_path / "a.jsonl")
    payload = "x" * 5000

    def worker(n):
        for i in range(50):
            assert log.write({"worker": n, "i": i, "question": payload})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    assert len(lines) == 32 * 50
    seen = {(r["worker"], r["i"]) for r in map(json.loads, lines)}
    assert len(seen) == 32 * 50


def test_unwritable_log_is_reported_not_raised(tmp_path, caplog):
    """A log that cannot be written returns False and says so once, through logging."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = AuditLog(blocker / "audit.jsonl")  # a folder path under a regular file
    assert log.check()["ok"] is False
    assert log.write({"event": "answer"}) is False
    assert sum("AUDIT LOG NOT WRITTEN" in r.message for r in caplog.records) == 1
    assert log.failures == 1 and log.check()["ok"] is False


def test_lone_surrogate_is_written_as_replacement_character(tmp_path):
    """A question holding a lone surrogate still gets its (valid UTF-8) audit line."""
    log = AuditLog(tmp_path / "a.jsonl")
    assert log.write({"question": "What is a topic? \ud800", "session_id": "s\udcff"})
    rec = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8"))
    assert rec["question"] == "What is a topic? \ufffd" and rec["session_id"] == "s\ufffd"
    assert log.check() == {"ok": True, "enabled": True, "failures": 0}


def test_huge_question_is_truncated_in_the_log(tmp_path):
    """A 1 MB question does not make a 1 MB audit line."""
    log = AuditLog(tmp_path / "a.jsonl")
    log.write({"question": "q" * 1_000_000})
    rec = json.loads((tmp_path / "a.jsonl").read_text())
    assert len(rec["question"]) == 4000 and rec["question_truncated_from"] == 1_000_000
