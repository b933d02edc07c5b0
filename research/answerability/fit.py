"""Score the collected records: per-feature AUROC, the model fit, and the held-out tables.

Reads the records `collect.py` wrote (OUT/{squad2,clapnq,corpus}.jsonl and OUT/*.df.json),
computes the features of `features.py` for every question the score gate saw, and then:

* `auroc`: the AUROC of every feature, answerable vs near_miss and vs out_of_corpus, per set;
* `fit`: a sign-constrained logistic regression on the 70% fit part, the cap_oov veto, a
  coordinate search on the calibration's operating-point objective, and the held-out tables
  (writes OUT/model_logistic.json and OUT/model_searched.json);
* `perset`: held-out answer rates with one threshold per set (set on that set's held-out part);
* `verify`: re-scores every question with `features.FINAL_MODEL`, the form a node would use;
* `counts`: how often the rare binary features fire, per set and kind;
* `all`: all of the above, in that order.

"Answered" always means end to end, as `textbound calibrate` counts it: the score reaches the
threshold *and* the rest of the graph answered in the permissive pass. The split is the
calibration's own (`textbound.quality.calibrate.is_holdout(id, 0.3)`), stored in each record.

Run from the repository root: `python -m research.answerability.fit all`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from research.answerability.features import (
    FEATURE_NAMES,
    FINAL_MODEL,
    LinearModel,
    answerability_features,
    make_stats,
)
from textbound.quality.calibrate import fit_threshold

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "research" / "answerability" / "out"
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_CORPUS = REPO / "corpus"
DEFAULT_CALIBRATION = Path(__file__).resolve().parent / "gate_0aa89da.json"
"""The shipped gate as of the study (commit 0aa89da), not whatever calibration ships now."""

GROUPS = ("squad2", "clapnq", "corpus")
"""Question sets: SQuAD 2.0 dev, ClapNQ dev and the textbook (group `corpus`)."""
KINDS = ("answerable", "near_miss", "out_of_corpus")
REFUSE_KINDS = ("near_miss", "out_of_corpus")
FALSE_REFUSAL = {"squad2": 0.10, "clapnq": 0.15, "corpus": 0.10}
"""Largest share of answerable questions a threshold may refuse, per set (the answer targets)."""
GATE = ("top1", "mean", "coverage", "best_sentence")
READER = ("reader", "reader_top1")
"""The answerability reader's log-odds: best over the passages it read, and on the top chunk."""
"""The shipped score gate's features, taken from the records."""
POSITIVE = frozenset({"cov1", "cov2", "draft_cos", "draft_cov"} | set(GATE) | set(READER))
"""Features whose fitted weight must be positive; all others must be negative, except FREE."""
FREE = frozenset({"wants_type", "n_terms"})
SKIPPED_PATHS = frozenset({"refuse_out_of_scope", "refuse_invalid_question"})
"""Paths that end before the score gate; those questions have no gate features."""
GROUP_WEIGHT = {"squad2": 1.0, "clapnq": 1.0, "corpus": 0.5}
VETOED = -50.0
"""The score a vetoed question gets (below any threshold the fits produce)."""


@dataclass
class Record:
    """One question the score gate saw, with its features."""

    group: str
    id: str
    kind: str
    question: str
    holdout: bool
    ok: bool
    """Whether the rest of the graph answered it in the permissive pass."""
    feat: dict[str, float] = field(default_factory=dict)


# --- loading ----------------------------------------------------------------------------------

def collection_texts(group: str, data: Path, corpus: Path) -> list[str]:
    """Return the texts a collection's word list is built from (titles and texts, or Markdown)."""
    if group == "corpus":
        return [p.read_text(encoding="utf-8") for p in corpus.rglob("*.md")]
    out = []
    with (data / group / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out.append(row["title"] + "\n" + row["text"])
    return out


def draft_cosines(raw: Sequence[dict[str, Any]], out: Path, data_dir: Path) -> dict[str, float]:
    """Return cosine(question, first draft sentence) per `group:id`, cached in OUT/draft_cos.json.

    Missing entries are embedded with the local all-MiniLM-L6-v2 (a question without a draft
    gets 0).
    """
    cache_path = out / "draft_cos.json"
    cache: dict[str, float] = {}
    if cache_path.exists():
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    todo = [r for r in raw if f"{r['group']}:{r['id']}" not in cache]
    if todo:
        from textbound.providers.embeddings import LocalMiniLMEmbeddings

        emb = LocalMiniLMEmbeddings(cache_dir=data_dir / "models", batch_size=32)
        qs = emb.embed_array([r["question"] for r in todo])
        ds = emb.embed_array([(r["draft"] or [""])[0] for r in todo])
        for r, q, d in zip(todo, qs, ds, strict=True):
            cache[f"{r['group']}:{r['id']}"] = float(q @ d) if r["draft"] else 0.0
        cache_path.write_text(json.dumps(cache), encoding="utf-8")
    return cache


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def reader_features(raw: dict[str, Any]) -> dict[str, float]:
    """Return READER for a record collected with the reader on ({} when it did not read)."""
    verdict = raw.get("answerability") or {}
    scores = verdict.get("scores") or {}
    if verdict.get("skipped", True) or verdict.get("score") is None or not scores:
        return {}
    top = next((c["chunk_id"] for c in raw["chunks"] if c["chunk_id"] in scores), None)
    return {"reader": _logit(float(verdict["score"])),
            "reader_top1": _logit(float(scores[top])) if top else _logit(0.0)}


def load_records(out: Path, data: Path, corpus: Path, calibration: dict[str, Any],
                 data_dir: Path | None = None) -> list[Record]:
    """Load every collected set under `out` and compute the features of each question.

    Besides FEATURE_NAMES, each record gets the gate features (GATE) and `gate_score`, the
    shipped calibration's weighted sum of them.
    """
    raw: list[dict[str, Any]] = []
    stats = {}
    for group in GROUPS:
        path = out / f"{group}.jsonl"
        if not path.exists():
            continue
        saved = json.loads((out / f"{group}.df.json").read_text(encoding="utf-8"))
        stats[group] = make_stats(saved["df"], saved["n_chunks"],
                                  collection_texts(group, data, corpus))
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r["gate_features"] and r["path"] not in SKIPPED_PATHS:
                    raw.append(r)
    cosines = draft_cosines(raw, out, data_dir or out / "data")
    weights = calibration["weights"]
    records = []
    for r in raw:
        feat = answerability_features(
            r["question"], [c["text"] for c in r["chunks"]][:3], stats[r["group"]],
            draft_cosine=cosines[f"{r['group']}:{r['id']}"], draft=r["draft"])
        for k in GATE:
            feat[k] = r["gate_features"][k]
        feat["gate_score"] = sum(weights[k] * r["gate_features"][k] for k in GATE)
        feat.update(reader_features(r))
        records.append(Record(r["group"], str(r["id"]), r["kind"], r["question"],
                              bool(r["holdout"]), not r["was_refusal"], feat))
    return records


# --- measures ---------------------------------------------------------------------------------

def auroc(pos: Iterable[float], neg: Iterable[float]) -> float:
    """Return P(pos > neg) with ties counted 1/2 (Mann-Whitney); pos are the answerable ones."""
    p, n = np.asarray(list(pos), float), np.asarray(list(neg), float)
    if len(p) == 0 or len(n) == 0:
        return float("nan")
    values = np.concatenate([p, n])
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)  # rank of the last copy of each distinct value
    ranks = (upper - (counts - 1) / 2)[inverse]  # average rank, 1-based
    return float((ranks[: len(p)].sum() - len(p) * (len(p) + 1) / 2) / (len(p) * len(n)))


def group_threshold(records: Sequence[Record], scores: np.ndarray, mask: np.ndarray) -> float:
    """Return the highest threshold meeting every set's answer target on the masked records.

    Each set's threshold is `textbound.quality.calibrate.fit_threshold` on its answerable
    questions; the lowest of them wins, so every set meets its target.
    """
    thr = math.inf
    for g in GROUPS:
        idx = [i for i, r in enumerate(records)
               if mask[i] and r.group == g and r.kind == "answerable"]
        if idx:
            ok = np.array([records[i].ok for i in idx])
            thr = min(thr, fit_threshold(scores[idx], ok, FALSE_REFUSAL[g]))
    return thr


def answered(records: Sequence[Record], scores: np.ndarray, thr: float) -> np.ndarray:
    """Return which questions are answered end to end at a threshold."""
    ok = np.array([r.ok for r in records])
    return (scores >= thr - 1e-12) & ok


def cell_masks(records: Sequence[Record]) -> dict[tuple[str, str], np.ndarray]:
    """Return a mask per (set, kind)."""
    return {(g, k): np.array([r.group == g and r.kind == k for r in records])
            for g in GROUPS for k in KINDS}


def rate_row(records: Sequence[Record], scores: np.ndarray, thr: float,
             mask: np.ndarray) -> list[str]:
    """Return 'answered/n (pct)' for every (set, kind) cell of the masked records."""
    ans = answered(records, scores, thr)
    cells = []
    for m in cell_masks(records).values():
        n, a = int((m & mask).sum()), int((ans & m & mask).sum())
        cells.append(f"{a}/{n} ({100 * a / max(n, 1):.1f}%)")
    return cells


def print_rates_header() -> None:
    """Print the header of a rates table."""
    cols = [f"{g} {k}" for g in GROUPS for k in ("ans", "NM", "OOC")]
    print("| model | threshold | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))


def print_rates(label: str, records: Sequence[Record], scores: np.ndarray, thr: float,
                mask: np.ndarray) -> None:
    """Print one row of a rates table."""
    print(f"| {label} | {thr:.4f} | " + " | ".join(rate_row(records, scores, thr, mask)) + " |")


def gate_scores(records: Sequence[Record], calibration: dict[str, Any]) -> np.ndarray:
    """Return the shipped gate's score, with questions under its floor at -9."""
    return np.array([r.feat["gate_score"] if r.feat["top1"] >= calibration["floor"] else -9.0
                     for r in records])


def model_scores(records: Sequence[Record], model: LinearModel) -> np.ndarray:
    """Return a model's logit per question, VETOED when its veto fires."""
    return np.array([max(model.logit(r.feat), VETOED) for r in records])


def holdout_auroc_rows(records: Sequence[Record],
                       scores: Sequence[tuple[str, np.ndarray]]) -> None:
    """Print held-out AUROC (answerable vs each refuse kind, per set) of combined scores."""
    print("| score | " + " | ".join(f"{g} {k}" for g in GROUPS for k in ("NM", "OOC")) + " |")
    print("|---|" + "---:|" * (2 * len(GROUPS)))
    for label, sc in scores:
        row = []
        for g in GROUPS:
            pos = [sc[i] for i, r in enumerate(records)
                   if r.holdout and r.group == g and r.kind == "answerable"]
            for k in REFUSE_KINDS:
                neg = [sc[i] for i, r in enumerate(records)
                       if r.holdout and r.group == g and r.kind == k]
                row.append(f"{auroc(pos, neg):.3f}")
        print(f"| {label} | " + " | ".join(row) + " |")


# --- the fit ----------------------------------------------------------------------------------

def fit_logistic(x: np.ndarray, y: np.ndarray, sw: np.ndarray, l2: float = 1.0,
                 iters: int = 50) -> np.ndarray:
    """Fit a weighted L2 logistic regression by Newton steps; return weights + bias (last)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.eye(d + 1) * l2
    reg[-1, -1] = 0.0  # the bias is not penalised
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (sw * (p - y)) + reg @ w
        hess = (xb * (sw * p * (1 - p))[:, None]).T @ xb + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def sample_weights(records: Sequence[Record], fit: np.ndarray) -> np.ndarray:
    """Weigh each (set, kind) cell of the fit part to a fixed total.

    Answerable 1 and each refuse kind 0.5 within a set; the textbook at half weight. Normalised
    to mean 1 over the fit part.
    """
    sw = np.ones(len(records))
    for (g, k), m in cell_masks(records).items():
        m = m & fit
        if m.sum():
            sw[m] = (1.0 if k == "answerable" else 0.5) / m.sum() * GROUP_WEIGHT[g]
    return sw / sw[fit].mean()


@dataclass
class Fitted:
    """A model on standardised features: score = [z, 1] @ w."""

    names: list[str]
    mu: np.ndarray
    sd: np.ndarray
    w: np.ndarray
    veto: str | None

    def to_model(self, threshold: float, notes: dict[str, str] | None = None) -> LinearModel:
        """Return the model in raw feature units (features with weight 0 left out)."""
        raw = self.w[:-1] / self.sd
        bias = float(self.w[-1] - (self.w[:-1] * self.mu / self.sd).sum())
        weights = {f: float(v) for f, v in zip(self.names, raw, strict=True) if v}
        return LinearModel(bias, weights, threshold, self.veto, notes or {})


def sign_constrained_fit(records: Sequence[Record], names: list[str], fit: np.ndarray,
                         l2: float, veto: str | None) -> tuple[Fitted, list[str]]:
    """Fit the logistic model, dropping wrong-signed features one at a time (largest first).

    Features are standardised with the mean and spread of all records (no labels are used for
    that). Returns the fit and the dropped features, in order.
    """
    x = np.array([[r.feat[f] for f in names] for r in records])
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    y = np.array([1.0 if r.kind == "answerable" else 0.0 for r in records])
    sw = sample_weights(records, fit)
    active = list(range(len(names)))
    dropped = []
    while True:
        wa = fit_logistic(z[fit][:, active], y[fit], sw[fit], l2=l2)
        bad = [(abs(wa[j]), i) for j, i in enumerate(active)
               if names[i] not in FREE and abs(wa[j]) > 1e-9
               and (wa[j] < 0) == (names[i] in POSITIVE)]
        if not bad:
            break
        worst = max(bad)[1]
        dropped.append(names[worst])
        active.remove(worst)
    w = np.zeros(len(names) + 1)
    w[active] = wa[:-1]
    w[-1] = wa[-1]
    return Fitted(names, mu, sd, w, veto), dropped


def standardised_scores(records: Sequence[Record], fitted: Fitted, w: np.ndarray) -> np.ndarray:
    """Return [z, 1] @ w, with vetoed questions at VETOED."""
    x = np.array([[r.feat[f] for f in fitted.names] for r in records])
    z = np.hstack([(x - fitted.mu) / fitted.sd, np.ones((len(records), 1))])
    name = fitted.veto
    veto = np.array([name is not None and r.feat[name] >= 1 for r in records], bool)
    return np.where(veto, VETOED, z @ w)


def leak_objective(records: Sequence[Record], scores: np.ndarray) -> float:
    """Return the mean answer rate over the refuse-expected cells at the common threshold.

    The operating-point objective of `textbound calibrate`: lower is better.
    """
    thr = group_threshold(records, scores, np.ones(len(records), bool))
    ans = answered(records, scores, thr)
    return float(np.mean([ans[m].mean() for (_, k), m in cell_masks(records).items()
                          if k in REFUSE_KINDS and m.sum()]))


def coordinate_search(records: Sequence[Record], fitted: Fitted, fit: np.ndarray,
                      rounds: int = 3, mults: Sequence[float] = (0.0, 0.5, 0.8, 1.25, 2.0)
                      ) -> tuple[np.ndarray, list[float]]:
    """Multiply one weight at a time while the fit part's leak objective improves.

    Returns the searched weights and the objective at the start and after every round.
    """
    sub = [r for r, f in zip(records, fit, strict=True) if f]
    best = fitted.w.copy()
    active = [j for j in range(len(fitted.names)) if best[j]]

    def objective(w: np.ndarray) -> float:
        return leak_objective(sub, standardised_scores(sub, fitted, w))

    best_obj = objective(best)
    trace = [best_obj]
    for _ in range(rounds):
        for j in active:
            for mult in mults:
                cand = best.copy()
                cand[j] = best[j] * mult
                o = objective(cand)
                if o < best_obj - 1e-4:
                    best_obj, best = o, cand
        trace.append(best_obj)
    return best, trace


def model_json(model: LinearModel) -> dict[str, Any]:
    """Return a model as JSON-ready data."""
    return {"bias": model.bias, "weights": model.weights, "threshold": model.threshold,
            "veto": model.veto, "notes": model.notes,
            "logit": "bias + sum(w * feature); answer iff not vetoed and logit >= threshold"}


def load_model(path: Path) -> LinearModel:
    """Read a model written by `fit`."""
    d = json.loads(path.read_text(encoding="utf-8"))
    return LinearModel(d["bias"], d["weights"], d["threshold"], d["veto"], d.get("notes", {}))


# --- commands ---------------------------------------------------------------------------------

def _reader_names(records: Sequence[Record]) -> list[str]:
    """READER when every record has the reader's features (collected with the reader on)."""
    return list(READER) if records and all("reader" in r.feat for r in records) else []


def cmd_auroc(records: Sequence[Record], **_: Any) -> None:
    """Print the AUROC of every feature on all questions of each set."""
    names = list(FEATURE_NAMES) + list(GATE) + ["gate_score"] + _reader_names(records)
    print(f"records: {len(records)}")
    print("\n## Per-feature AUROC, all questions (> 0.5: a higher value looks more answerable)\n")
    print("| feature | " + " | ".join(f"{g} NM | {g} OOC" for g in GROUPS) + " |")
    print("|---|" + "---:|" * (2 * len(GROUPS)))
    for f in names:
        row = []
        for g in GROUPS:
            pos = [r.feat[f] for r in records if r.group == g and r.kind == "answerable"]
            for k in REFUSE_KINDS:
                neg = [r.feat[f] for r in records if r.group == g and r.kind == k]
                row.append(f"{auroc(pos, neg):.3f}")
        print(f"| {f} | " + " | ".join(row) + " |")


def cmd_fit(records: Sequence[Record], calibration: dict[str, Any], out: Path, l2: float,
            veto: str | None, exclude: Sequence[str], search: bool, **_: Any) -> None:
    """Fit, search, print the held-out tables and write the models."""
    names = [f for f in FEATURE_NAMES if f not in exclude] + list(GATE) + [
        f for f in _reader_names(records) if f not in exclude]
    hold = np.array([r.holdout for r in records])
    fit = ~hold
    everything = np.ones(len(records), bool)
    fitted, dropped = sign_constrained_fit(records, names, fit, l2, veto)
    print("\n## Sign-constrained logistic fit (70% part)\n")
    print("dropped (wrong sign), in order:", ", ".join(dropped) or "none")
    if veto:
        print(f"veto {veto} >= 1 fires on:",
              {f"{g}/{k}": int(sum(1 for r in records if r.group == g and r.kind == k
                                   and r.feat[veto] >= 1)) for g in GROUPS for k in KINDS})
    logistic_scores = standardised_scores(records, fitted, fitted.w)
    t_log = group_threshold(records, logistic_scores, fit)
    logistic = fitted.to_model(t_log, {"fit": "sign-constrained logistic, 70% part"})
    print("\nraw-unit weights (logit = bias + sum w * feature):")
    for f, v in logistic.weights.items():
        print(f"  {f:16s} {v:+.4f}")
    print(f"  {'bias':16s} {logistic.bias:+.4f}")

    gs = gate_scores(records, calibration)
    print("\n## A. Held-out 30%, answered end to end, one threshold for all sets\n")
    print_rates_header()
    print_rates("shipped gate (its own threshold)", records, gs,
                calibration["answer_threshold"], hold)
    print_rates("shipped gate, threshold refit on 70%", records, gs,
                group_threshold(records, gs, fit), hold)
    print_rates("shipped gate, threshold set on held-out (optimistic)", records, gs,
                group_threshold(records, gs, hold), hold)
    print_rates("logistic + veto, threshold fit on 70%", records, logistic_scores, t_log, hold)
    print_rates("logistic + veto, threshold set on held-out (optimistic)", records,
                logistic_scores, group_threshold(records, logistic_scores, hold), hold)
    out.mkdir(parents=True, exist_ok=True)
    (out / "model_logistic.json").write_text(json.dumps(model_json(logistic), indent=1),
                                             encoding="utf-8")
    scored = [("shipped gate_score", np.array([r.feat["gate_score"] for r in records])),
              ("logistic (sign-constrained) + veto", logistic_scores)]
    final_scores, t_final = logistic_scores, t_log
    if search:
        w, trace = coordinate_search(records, fitted, fit)
        final_scores = standardised_scores(records, fitted, w)
        t_final = group_threshold(records, final_scores, fit)
        searched = Fitted(names, fitted.mu, fitted.sd, w, veto).to_model(
            t_final, {"fit": "sign-constrained logistic, then coordinate search, 70% part"})
        print_rates("final (searched) + veto, threshold fit on 70%", records, final_scores,
                    t_final, hold)
        print("\nsearch objective (fit part), start then per round:",
              " -> ".join(f"{o:.4f}" for o in trace))
        print("zeroed by the search:",
              ", ".join(f for f in logistic.weights if f not in searched.weights) or "none")
        print("searched raw-unit weights:",
              {f: round(v, 4) for f, v in searched.weights.items()})
        print(f"searched bias {searched.bias!r}, threshold {t_final!r}")
        check = model_scores(records, searched)
        print("raw-unit formula vs standardised score, max abs diff:",
              float(np.abs(check - final_scores).max()))
        (out / "model_searched.json").write_text(json.dumps(model_json(searched), indent=1),
                                                 encoding="utf-8")
        scored.append(("final (searched) + veto", final_scores))

    print("\n## Fit part (70%)\n")
    print_rates_header()
    print_rates("logistic + veto", records, logistic_scores, t_log, fit)
    if search:
        print_rates("final (searched) + veto", records, final_scores, t_final, fit)
    print("\n## All questions (fit + held-out)\n")
    print_rates_header()
    print_rates("final model" if search else "logistic + veto", records, final_scores, t_final,
                everything)
    print_rates("shipped gate (its own threshold)", records, gs, calibration["answer_threshold"],
                everything)
    print("\n## B. Held-out AUROC of the combined scores (answerable vs kind)\n")
    holdout_auroc_rows(records, scored)
    print(f"\n## Textbook decisions of the {'final' if search else 'logistic'} model at "
          f"{t_final:.4f} (refuse-expected questions, and answerable ones refused)\n")
    ans = answered(records, final_scores, t_final)
    for i, r in enumerate(records):
        if r.group == "corpus" and (r.kind != "answerable" or not ans[i]):
            print(f"  {r.kind:14s} {'ANSWER' if ans[i] else 'refuse'} {final_scores[i]:+.3f} "
                  f"holdout={r.holdout} {r.question}")
    tb = [i for i, r in enumerate(records) if r.group == "corpus" and r.kind == "answerable"]
    print(f"  textbook answerable answered: {int(ans[tb].sum())}/{len(tb)} (all parts)")


def cmd_perset(records: Sequence[Record], calibration: dict[str, Any], model: LinearModel,
               **_: Any) -> None:
    """Print held-out rates with each set's own threshold, set on its held-out part."""
    print("\n## C. Per-set threshold set on that set's held-out part (optimistic)\n")
    print("| score | set (false-refusal target) | threshold | answerable | near_miss | "
          "out_of_corpus |")
    print("|---|---|---:|---:|---:|---:|")
    for label, scores in (("shipped gate", gate_scores(records, calibration)),
                          ("final model", model_scores(records, model))):
        for g in GROUPS:
            mask = np.array([r.group == g and r.holdout for r in records])
            sub = [r for r, m in zip(records, mask, strict=True) if m]
            if not sub:
                continue
            thr = group_threshold(sub, scores[mask], np.ones(len(sub), bool))
            ans = answered(sub, scores[mask], thr)
            cells = []
            for k in KINDS:
                idx = [i for i, r in enumerate(sub) if r.kind == k]
                a = int(ans[idx].sum())
                cells.append(f"{a}/{len(idx)} ({100 * a / max(len(idx), 1):.1f}%)")
            print(f"| {label} | {g} ({FALSE_REFUSAL[g]:.0%}) | {thr:.3f} | "
                  + " | ".join(cells) + " |")


def cmd_verify(records: Sequence[Record], model: LinearModel, **_: Any) -> None:
    """Re-score every question with the model's raw-unit form and print the answer counts."""
    print(f"\n## Answered by the model (threshold {model.threshold:.4f}) and the rest of the "
          "graph\n")
    parts: tuple[tuple[str, Callable[[Record], bool]], ...] = (
        ("held-out 30%", lambda r: r.holdout), ("all", lambda r: True))
    for part, keep in parts:
        print(part)
        for g in GROUPS:
            row = []
            for k in KINDS:
                sub = [r for r in records if r.group == g and r.kind == k and keep(r)]
                a = sum(1 for r in sub if r.ok and model.answers(r.feat))
                row.append(f"{k} {a}/{len(sub)}")
            print(f"  {g:7s}", *row)
    for r in records:
        if "Windows" in r.question and r.group == "corpus":
            unvetoed = LinearModel(model.bias, model.weights, model.threshold, None)
            print(f"\n{r.question!r}: logit {model.logit(r.feat)}, cap_oov {r.feat['cap_oov']}, "
                  f"top1 {r.feat['top1']:.3f}, without the veto {unvetoed.logit(r.feat):.3f}")


def cmd_counts(records: Sequence[Record], **_: Any) -> None:
    """Print how often the rare features fire, per set and kind."""
    print("\n## How often rare features fire (questions with feature >= value / questions)\n")
    cells = Counter((r.group, r.kind) for r in records)
    for f, value in (("cap_oov", 1.0), ("oov_any", 1.0), ("word_oov", 0.3), ("word_oov", 0.5),
                     ("cap_miss", 1.0), ("neg_mismatch", 1.0), ("q_neg", 1.0)):
        fired = Counter((r.group, r.kind) for r in records if r.feat[f] >= value)
        print(f"{f} >= {value}:", ", ".join(f"{g}/{k} {fired[(g, k)]}/{cells[(g, k)]}"
                                             for g in GROUPS for k in KINDS if cells[(g, k)]))
    print("\nanswerable questions with cap_oov >= 1 (refused by the veto):")
    for r in records:
        if r.kind == "answerable" and r.feat["cap_oov"] >= 1:
            print(f"  {r.group}: {r.question}")


COMMANDS: dict[str, Callable[..., None]] = {
    "auroc": cmd_auroc, "fit": cmd_fit, "perset": cmd_perset, "verify": cmd_verify,
    "counts": cmd_counts,
}


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run the chosen commands."""
    ap = argparse.ArgumentParser(prog="python -m research.answerability.fit",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=[*COMMANDS, "all"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="folder with the collected records; models are written here")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="benchmark data (squad2/, clapnq/ with corpus.jsonl)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the textbook folder")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="textbound data dir for the embedding model cache (default OUT/data)")
    ap.add_argument("--calibration", type=Path, default=DEFAULT_CALIBRATION,
                    help="the gate calibration the new model is compared with (default: "
                    "the one shipped when the study ran)")
    ap.add_argument("--model", type=Path, default=None,
                    help="model JSON for perset/verify (default: features.FINAL_MODEL)")
    ap.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the logistic fit")
    ap.add_argument("--veto", default="cap_oov", help="veto feature ('' for none)")
    ap.add_argument("--exclude", default="draft_novel",
                    help="comma-separated features left out of the fit")
    ap.add_argument("--no-search", action="store_true", help="skip the coordinate search")
    args = ap.parse_args(argv)

    calibration = json.loads(args.calibration.read_text(encoding="utf-8"))
    records = load_records(args.out, args.data, args.corpus, calibration, args.data_dir)
    if not records:
        ap.error(f"no collected records in {args.out}; run research.answerability.collect")
    options = {
        "records": records, "calibration": calibration, "out": args.out, "l2": args.l2,
        "veto": args.veto or None, "exclude": [f for f in args.exclude.split(",") if f],
        "search": not args.no_search,
        "model": load_model(args.model) if args.model else FINAL_MODEL,
    }
    for name in (COMMANDS if args.command == "all" else [args.command]):
        COMMANDS[name](**options)


if __name__ == "__main__":
    main()
