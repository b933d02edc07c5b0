"""Mine reader training pairs from installed documentation: `python -m training.docmining --help`.

One unit of work is one package's manual pages (or its HTML manual). Each finished unit is a
file under OUT/parts/, written whole (to a temporary name, then renamed), so a run that stops
goes on where it left off when run again. At the end the parts are joined, in package order,
into OUT/docmining-man.jsonl and OUT/docmining-html.jsonl (the format of
../shared/data/train), and OUT/sources.json lists every package used or skipped, with its
source package, licence and counts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path

from training.docmining.htmldoc import parse_html
from training.docmining.mine import Rates, kind_of, mine_html, mine_man
from training.docmining.roff import ManPage, parse_man
from training.docmining.sources import (
    DEFAULT_EXCLUDE,
    PackageIndex,
    is_forbidden,
    licence_of,
    read_doc,
    read_exclude,
)

__all__ = ["main", "run"]

_MAN_SUFFIXES = (".gz", ".1", ".5", ".8")


def _sample(paths: list[str], cap: int, seed: int, package: str) -> list[str]:
    if cap <= 0 or len(paths) <= cap:
        return paths
    return sorted(random.Random(f"{seed}:{package}:pages").sample(paths, cap))


def _mine_man_package(package: str, paths: list[str], seed: int, rates: Rates
                      ) -> tuple[list[dict], dict]:
    pages: list[tuple[str, ManPage]] = []
    skipped: Counter[str] = Counter()
    for p in paths:
        path = Path(p)
        if path.is_symlink() or not path.is_file() or is_forbidden(path):
            skipped["link or not a file"] += 1
            continue
        try:
            pages.append((p, parse_man(read_doc(path))))
        except (ValueError, OSError) as exc:
            skipped[str(exc)] += 1
    names = sorted({pg.name for _, pg in pages})
    records: list[dict] = []
    for p, pg in pages:
        records += mine_man(pg, package=package, path=p, seed=seed,
                            siblings=[n for n in names if n != pg.name], rates=rates)
    return records, {"files": len(paths), "parsed": len(pages), "unparsed": dict(skipped)}


def _mine_html_package(package: str, paths: list[str], seed: int, rates: Rates
                       ) -> tuple[list[dict], dict]:
    parsed = []
    for p in paths:
        path = Path(p)
        if not path.is_file() or is_forbidden(path):
            continue
        lists, tables = parse_html(read_doc(path))
        if lists or tables:
            parsed.append((p, lists, tables))
    records: list[dict] = []
    for p, lists, tables in parsed:
        terms = [t for q, ls, _ in parsed if q != p for dl in ls for t, _ in dl.entries]
        keys = [r[0] for q, _, ts in parsed if q != p for t in ts for r in t.rows]
        # one page's own other lists and tables are a pool too, filtered against each passage
        terms += [t for dl in lists for t, _ in dl.entries]
        keys += [r[0] for t in tables for r in t.rows]
        records += mine_html(lists, tables, package=package, path=p, seed=seed,
                             other_terms=terms, other_keys=keys, rates=rates)
    return records, {"files": len(paths), "parsed": len(parsed), "unparsed": {}}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run(args: argparse.Namespace) -> dict:
    """Mine every unit not yet done, then join the parts and write the manifest."""
    out = Path(args.out)
    parts = out / "parts"
    patterns = read_exclude(Path(args.exclude))
    index = PackageIndex.from_dpkg(Path(args.dpkg_info), Path(args.dpkg_status))
    rates = Rates()
    sections = tuple(s.strip() for s in args.sections.split(",") if s.strip())
    units: list[tuple[str, str, list[str]]] = []
    man_root = args.man_root.rstrip("/") + "/"
    for pkg, files in index.files_by_package(man_root, _MAN_SUFFIXES).items():
        files = [f for f in files if f[len(man_root):].split("/")[0] in sections]
        if files:
            units.append(("man", pkg, files))
    if not args.no_html:
        doc_root = args.doc_root.rstrip("/") + "/"
        for pkg, files in index.files_by_package(doc_root, (".html", ".htm")).items():
            units.append(("html", pkg, files))
    units.sort(key=lambda u: (u[0], u[1]))
    manifest: list[dict] = []
    todo: list[tuple[str, str, list[str]]] = []
    for kind, pkg, files in units:
        if index.excluded(pkg, patterns):
            manifest.append({"package": pkg, "source_package": index.source_of(pkg),
                             "type": kind, "skipped": "EXCLUDE"})
            continue
        todo.append((kind, pkg, files))
    if args.limit:
        todo = [u for k in ("html", "man") for u in [t for t in todo if t[0] == k][: args.limit]]

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    done = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  disable=args.quiet) as bar:
        task = bar.add_task("mining", total=len(todo))
        for kind, pkg, files in todo:
            bar.update(task, description=f"{kind} {pkg}")
            (parts / kind).mkdir(parents=True, exist_ok=True)
            part, meta_path = parts / kind / f"{pkg}.jsonl", parts / kind / f"{pkg}.meta.json"
            if not (part.is_file() and meta_path.is_file()):
                chosen = _sample(files, args.max_pages, args.seed, pkg)
                miner = _mine_man_package if kind == "man" else _mine_html_package
                records, info = miner(pkg, chosen, args.seed, rates)
                lic = licence_of(pkg, Path(args.doc_root))
                meta = {"package": pkg, "source_package": index.source_of(pkg), "type": kind,
                        **info, "used": len(chosen), "records": len(records),
                        "positives": sum(not r["is_impossible"] for r in records),
                        "negatives": sum(r["is_impossible"] for r in records),
                        "by_kind": dict(sorted(Counter(kind_of(r["id"])
                                                       for r in records).items())),
                        "licence": lic.summary, "licences": list(lic.licences),
                        "copyright_file": lic.copyright_file, "copyright_sha1": lic.sha1}
                _write_atomic(meta_path, json.dumps(meta, indent=1) + "\n")
                # the part last: its presence says the unit is done
                _write_atomic(part, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                            for r in records))
                done += 1
            manifest.append(json.loads(meta_path.read_text(encoding="utf-8")))
            bar.advance(task)
    totals: dict[str, Counter[str]] = {}
    for kind in ("man", "html"):
        joined = out / f"docmining-{kind}.jsonl"
        texts = [(parts / kind / f"{m['package']}.jsonl").read_text(encoding="utf-8")
                 for m in manifest if m["type"] == kind and "skipped" not in m]
        _write_atomic(joined, "".join(texts))
        c: Counter[str] = Counter()
        for m in manifest:
            if m["type"] == kind and "skipped" not in m:
                c.update({"packages": 1, "records": m["records"], "positives": m["positives"],
                          "negatives": m["negatives"], **m["by_kind"]})
        totals[kind] = c
    summary = {"seed": args.seed, "limit": args.limit, "max_pages": args.max_pages,
               "exclude": list(patterns), "mined_now": done,
               "totals": {k: dict(sorted(v.items())) for k, v in totals.items()},
               "packages": manifest}
    _write_atomic(out / "sources.json", json.dumps(summary, indent=1) + "\n")
    return summary


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m training.docmining",
        description="Mine (question, passage, answer) pairs and hard negatives from installed "
                    "Debian manual pages and HTML manuals. Run the same command again to resume.")
    p.add_argument("--out", default="runs/docmining", help="output folder")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--limit", type=int, default=0,
                   help="mine only the first N packages of each type (smoke)")
    p.add_argument("--max-pages", type=int, default=100,
                   help="pages per package at most (a seeded sample; 0: all)")
    p.add_argument("--sections", default="man1,man5,man8", help="manual sections to read")
    p.add_argument("--man-root", default="/usr/share/man")
    p.add_argument("--doc-root", default="/usr/share/doc")
    p.add_argument("--no-html", action="store_true", help="manual pages only")
    p.add_argument("--exclude", default=str(DEFAULT_EXCLUDE),
                   help="package-name patterns that must not be mined")
    p.add_argument("--dpkg-info", default="/var/lib/dpkg/info")
    p.add_argument("--dpkg-status", default="/var/lib/dpkg/status")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> None:
    """Entry point: mine, then print the totals."""
    summary = run(parser().parse_args(argv))
    json.dump(summary["totals"], sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
