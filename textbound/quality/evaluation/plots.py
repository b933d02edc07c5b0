"""The evaluation's PNG plots: top-1 score by kind, answered vs leaked, refusals per reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textbound.quality.evaluation.metrics import tradeoff_curve
from textbound.quality.plotting import pyplot


def write_plots(result: dict[str, Any], out: Path, title: str) -> list[str]:
    """Write the PNG plots; return their file names.

    Raises SetupError naming the `reports` extra when matplotlib is not installed.
    """
    plt = pyplot()
    records = result["records"]
    report = result["report"]
    first = next(iter(records))
    files = []

    fig, ax = plt.subplots(figsize=(7, 4))
    kinds = sorted({r["kind"] for r in records[first]})
    for kind in kinds:
        xs = [r["features"]["top1"] for r in records[first]
              if r["kind"] == kind and "top1" in r["features"]]
        ax.hist(xs, bins=40, range=(-0.1, 1.0), histtype="step", linewidth=1.6,
                label=f"{kind} (n={len(xs)})")
    ax.set_xlabel("top-1 cosine")
    ax.set_ylabel("questions")
    ax.set_title(f"{title}: top-1 score by kind")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "top1_by_kind.png", dpi=110)
    plt.close(fig)
    files.append("top1_by_kind.png")

    fig, ax = plt.subplots(figsize=(6, 5))
    for feature, recs, label in (("gate_score", records.get("calibrated"),
                                  "calibrated gate score"),
                                 ("top1", records[first], "top-1 cosine")):
        if not recs:
            continue
        _, answered, leaked = tradeoff_curve(recs, feature)
        ax.plot(leaked, answered, label=f"sweep: {label}")
    for policy, rep in report["policies"].items():
        pos = [k for k in rep["kinds"].values() if k["expected"] == "answer"]
        neg = [k for k in rep["kinds"].values() if k["expected"] != "answer"]
        a = sum(k["answered"] for k in pos) / max(sum(k["n"] for k in pos), 1)
        leak = sum(k["answered"] for k in neg) / max(sum(k["n"] for k in neg), 1)
        ax.plot([leak], [a], "o", markersize=8, label=f"{policy} (end to end)")
    ax.set_xlabel("refuse-expected questions answered (leaked)")
    ax.set_ylabel("answerable questions answered")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(f"{title}: answered vs leaked")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "tradeoff.png", dpi=110)
    plt.close(fig)
    files.append("tradeoff.png")

    reasons = sorted({reason for rep in report["policies"].values()
                      for k in rep["kinds"].values() for reason in k["refusals"]})
    if reasons:
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(report["policies"])
        for i, (policy, rep) in enumerate(report["policies"].items()):
            counts = [sum(k["refusals"].get(r, 0) for k in rep["kinds"].values())
                      for r in reasons]
            ax.bar([j + i * width for j in range(len(reasons))], counts, width, label=policy)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(reasons))])
        ax.set_xticklabels(reasons, rotation=20, ha="right")
        ax.set_ylabel("refusals")
        ax.set_title(f"{title}: refusals per reason")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "refusals.png", dpi=110)
        plt.close(fig)
        files.append("refusals.png")
    return files
