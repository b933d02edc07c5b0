"""Derive the asked-attribute synonym table from answerable training questions.

For every answerable question whose form asks for an attribute (textbound/answer/attribute.py), the
sentence of its passage that holds the gold answer is the sentence that states the attribute.
When that sentence lacks the attribute word itself (by five-letter prefix), the words it has
instead are counted. A word is kept as a synonym of the attribute when it stands in for it often
(at least `--min-count` times and in `--min-share` of those sentences) and far more often than
chance (`--min-lift` times its rate over all answer sentences): born -> birth, died -> death.

    python -m training.attributes.derive --out models/attributes/synonyms.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

from textbound.answer.attribute import asked_forms, form_key, says
from textbound.text import STOPWORDS, prefix_key, sentence_spans, words

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "train" / "squad11-train.jsonl"


def _words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS and not w.isdigit() and len(w) >= 3}


def _keys(text: str) -> set[str]:
    return {prefix_key(w) for w in _words(text)}


def derive(path: Path, min_count: int, min_share: float, min_lift: float, cap: int,
           min_support: int = 8) -> dict[str, object]:
    """Return the synonym table and the counts behind it."""
    asked_n: Counter[str] = Counter()
    stated: Counter[str] = Counter()
    instead: dict[str, Counter[str]] = defaultdict(Counter)
    df: Counter[str] = Counter()
    sentences = 0
    seen: list[tuple[str, set[str]]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if not row.get("answers"):
                continue
            start = int(row["answers"][0]["start"])
            context = row["context"]
            sentence = next((context[s:e] for s, e in sentence_spans(context) if s <= start < e),
                            None)
            if sentence is None:
                continue
            said = _words(sentence)
            have = {prefix_key(w) for w in said}
            sentences += 1
            df.update(have)
            attrs = asked_forms(row["question"])
            if not attrs:
                continue
            q_keys = _keys(row["question"])
            for a in attrs:
                word = prefix_key(a.split(":", 1)[1])
                # per question form, and pooled over forms ("*:") for the rarer forms
                for ka in (form_key(a), f"*:{word}"):
                    asked_n[ka] += 1
                    seen.append((ka, said))
                    if says(word, said):
                        stated[ka] += 1
                    else:
                        instead[ka].update(have - q_keys)
    table: dict[str, list[str]] = {}
    checkable: dict[str, float] = {}
    for ka, counts in instead.items():
        missing = asked_n[ka] - stated[ka]
        keep = []
        for w, c in counts.most_common():
            share = c / missing
            lift = share / (df[w] / sentences)
            if c >= min_count and share >= min_share and lift >= min_lift:
                keep.append(w)
            if len(keep) >= cap:
                break
        if keep:
            table[ka] = keep
    # how often the gold sentence states the attribute, itself or by a kept synonym
    said: Counter[str] = Counter()
    for ka, words_said in seen:
        word = ka.split(":", 1)[1]
        said[ka] += says(word, words_said) or any(says(w, words_said)
                                                  for w in table.get(ka, ()))
    for ka, n in asked_n.items():
        if n >= min_support:
            checkable[ka] = round(said[ka] / n, 3)
    return {"synonyms": dict(sorted(table.items())),
            "stated_rate": dict(sorted(checkable.items())),
            "attributes_seen": len(asked_n), "questions_with_attribute": sum(asked_n.values()),
            "answer_sentences": sentences}


def main() -> None:
    """Parse arguments, derive the table and write it with its provenance."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=REPO / "models" / "attributes" / "synonyms.json")
    ap.add_argument("--min-count", type=int, default=4)
    ap.add_argument("--min-share", type=float, default=0.12)
    ap.add_argument("--min-lift", type=float, default=10.0)
    ap.add_argument("--cap", type=int, default=8)
    args = ap.parse_args()
    result = derive(args.data, args.min_count, args.min_share, args.min_lift, args.cap)
    digest = hashlib.sha256(args.data.read_bytes()).hexdigest()
    result["provenance"] = {
        "data": args.data.name, "data_sha256": digest,
        "command": "python -m training.attributes.derive "
                   f"--min-count {args.min_count} --min-share {args.min_share} "
                   f"--min-lift {args.min_lift} --cap {args.cap}",
        "date": dt.date.today().isoformat(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(result['synonyms'])} attributes with synonyms "  # type: ignore[arg-type]
          f"from {result['questions_with_attribute']} questions -> {args.out}")


if __name__ == "__main__":
    main()
