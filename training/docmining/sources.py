"""Where the documentation comes from: files, the Debian package owning each, its licence.

Ownership is read once from dpkg's file lists (/var/lib/dpkg/info/*.list) and source package
names from dpkg's status file, so `dpkg -S` is never run per file. A package is excluded when
its binary or source name matches a pattern of ../shared/data/books/EXCLUDE (the documentation
of the dev pool's own books). Paths under the dev pool's books, OpenStax or the repository's
corpus/ are refused outright, whatever links lead there.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PackageIndex", "Licence", "read_exclude", "licence_of", "is_forbidden",
           "read_doc", "FORBIDDEN_ROOTS", "DEFAULT_EXCLUDE"]

REPO = Path(__file__).resolve().parents[2]
DEFAULT_EXCLUDE = REPO.parent / "shared" / "data" / "books" / "EXCLUDE"
# measured material: never mined (issue 38)
FORBIDDEN_ROOTS = (REPO.parent / "shared" / "data" / "books", REPO / "corpus")
_FORBIDDEN_PARTS = ("openstax",)


def read_doc(path: Path) -> str:
    """A documentation file's text, gunzipped when it ends in .gz (bad bytes replaced)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def is_forbidden(path: Path) -> bool:
    """Whether `path` (or the file it links to) is dev-pool material that must not be read."""
    for p in (path, path.resolve()):
        if any(p == root or root in p.parents for root in FORBIDDEN_ROOTS):
            return True
        if any(part.lower().startswith(_FORBIDDEN_PARTS) for part in p.parts):
            return True
    return False


def read_exclude(path: Path = DEFAULT_EXCLUDE) -> tuple[str, ...]:
    """The package-name patterns of an EXCLUDE file (``#`` comments and blank lines skipped)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: it lists the packages that must not be mined")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return tuple(out)


@dataclass
class PackageIndex:
    """Which installed package owns each file, and each package's source package."""

    owner: dict[str, str]
    source: dict[str, str]

    @classmethod
    def from_dpkg(cls, info: Path = Path("/var/lib/dpkg/info"),
                  status: Path = Path("/var/lib/dpkg/status")) -> PackageIndex:
        """Read dpkg's file lists and status file (once; nothing is run)."""
        owner: dict[str, str] = {}
        for lst in sorted(info.glob("*.list")):
            pkg = lst.name[: -len(".list")].split(":")[0]
            for line in lst.read_text(encoding="utf-8", errors="replace").splitlines():
                owner.setdefault(line, pkg)
        source: dict[str, str] = {}
        if status.is_file():
            pkg = ""
            for line in status.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Package: "):
                    pkg = line[9:].strip()
                elif line.startswith("Source: ") and pkg:
                    source[pkg] = line[8:].split("(")[0].strip()
        return cls(owner=owner, source=source)

    def package_of(self, path: Path) -> str | None:
        """The package that installed `path` (or, for a link, the file it names), if any."""
        return self.owner.get(str(path)) or self.owner.get(str(path.resolve()))

    def source_of(self, package: str) -> str:
        """The source package a binary package was built from (itself when dpkg names none)."""
        return self.source.get(package, package)

    def excluded(self, package: str, patterns: tuple[str, ...]) -> bool:
        """Whether the package or its source package matches an EXCLUDE pattern."""
        names = {package, self.source_of(package)}
        return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)

    def files_by_package(self, prefix: str, suffixes: tuple[str, ...]) -> dict[str, list[str]]:
        """Owned files under `prefix` ending in one of `suffixes`, grouped by package, sorted."""
        out: dict[str, list[str]] = defaultdict(list)
        for path, pkg in self.owner.items():
            if path.startswith(prefix) and path.endswith(suffixes):
                out[pkg].append(path)
        return {k: sorted(v) for k, v in sorted(out.items())}


@dataclass(frozen=True)
class Licence:
    """What a package's Debian copyright file says about its licence."""

    summary: str
    licences: tuple[str, ...]
    copyright_file: str
    sha1: str


_FREE_FORM = (
    (r"GNU\s+(?:Lesser|Library)\s+General\s+Public\s+License", "LGPL"),
    (r"GNU\s+Free\s+Documentation\s+License", "GFDL"),
    (r"GNU\s+General\s+Public\s+License", "GPL"),
    (r"Apache\s+License,?\s+(?:Version\s+|v\.?\s?)2\.0", "Apache-2.0"),
    (r"Artistic License", "Artistic"),
    (r"\bMIT\b|Permission is hereby granted, free of charge", "MIT/X11-style"),
    (r"BSD|Redistribution and use in source and binary forms", "BSD-style"),
    (r"public domain", "public-domain"),
)


def licence_of(package: str, doc_root: Path = Path("/usr/share/doc")) -> Licence:
    """Read /usr/share/doc/<package>/copyright: the licence of ``Files: *`` and all named.

    Machine-readable (DEP-5) files give their ``License:`` names; a free-form file is matched
    against a few well-known licence names, all listed in the summary (read the file for which
    covers what). A missing file gives the summary "unknown".
    """
    path = doc_root / package / "copyright"
    if not path.is_file():
        return Licence("unknown", (), str(path), "")
    text = path.read_text(encoding="utf-8", errors="replace")
    sha1 = hashlib.sha1(text.encode("utf-8")).hexdigest()
    if text.startswith("Format:"):
        names: list[str] = []
        main = ""
        for stanza in re.split(r"\n\s*\n", text):
            files = re.search(r"^Files:\s*(.*)$", stanza, re.M)
            lic = re.search(r"^License:\s*(.+)$", stanza, re.M)
            if lic and files:
                name = lic.group(1).strip()
                if files.group(1).strip() == "*" and not main:
                    main = name
                if name not in names:
                    names.append(name)
        return Licence(main or (names[0] if names else "unknown"), tuple(sorted(names)),
                       str(path), sha1)
    found = tuple(name for pat, name in _FREE_FORM if re.search(pat, text, re.I))
    # a free-form file names licences in no fixed order: all are listed, none is picked
    summary = f"free-form: {', '.join(found)}" if found else "free-form: unrecognised"
    return Licence(summary, found, str(path), sha1)
