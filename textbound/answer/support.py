"""Whether a draft's sentence is supported by the text it cites: words, key terms, cosine.

A sentence is supported when its lexical containment in the cited text reaches the sentence
support threshold, or, only when the cited text holds the sentence's key (rarest) terms and half
its words, its cosine to the best cited sentence does; a name or number absent from the cited
text (or, for a chat draft, changed against it) unsupports it whatever the figures. A chat
sentence that fails against its own citations may be re-cited to another evidence passage that
supports it. Embeddings are computed only for the sentences lexical containment leaves in doubt.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from textbound.answer.chat_claims import entity_mismatches
from textbound.answer.evidence import Weigher
from textbound.answer.named_section import code_title
from textbound.shapes import ChunkDict
from textbound.text import content_words, key_tokens, normalize, split_sentences

__all__ = ["COSINE_MIN_LEXICAL", "KEY_TERMS", "assess", "cited_text", "cosine_rows",
           "fill_cosines", "is_supported", "recite"]

KEY_TERMS = 3
"""The claim's rarest content words that its cited text must hold before cosine may count."""
COSINE_MIN_LEXICAL = 0.5
"""Cosine support counts only for a sentence at least this contained in its cited text."""


def _lexical_support(sentence: str, cited_text: str) -> float:
    words = content_words(sentence)
    if not words:
        return 1.0
    have = set(content_words(cited_text))
    return sum(1 for w in words if w in have) / len(words)


def _unsupported_tokens(sentence: str, cited_text: str) -> list[str]:
    haystack = normalize(cited_text).replace(",", "")
    return sorted(t for t in key_tokens(sentence) if t not in haystack)


def _key_terms_present(sentence: str, cited_text: str, weigh: Weigher) -> bool:
    """Return whether the cited text holds the sentence's KEY_TERMS rarest content words."""
    words = set(content_words(sentence))
    if not words:
        return True
    key = sorted(words, key=lambda w: (-weigh(w), -len(w), w))[:KEY_TERMS]
    have = set(content_words(cited_text))
    return all(w in have for w in key)


def assess(text: str, cited_text: str, weigh: Weigher, chat: bool) -> dict[str, Any]:
    """Score one sentence against one cited text, before any cosine.

    Names and numbers are compared with the cited sentences only for a chat draft: an extractive
    sentence is verbatim from its chunk, and may span what the splitter calls two sentences.
    """
    lex = _lexical_support(text, cited_text)
    changed = entity_mismatches(text, cited_text) if chat else []
    return {"lexical": round(lex, 3), "cosine": None,
            "unsupported_tokens": sorted(set(_unsupported_tokens(text, cited_text))
                                         | set(changed)),
            "cosine_allowed": lex >= COSINE_MIN_LEXICAL
            and _key_terms_present(text, cited_text, weigh)}


def cosine_rows(rows: list[dict[str, Any]], texts: list[str], cited: list[list[str]],
                embeddings: Any) -> None:
    """Fill rows' cosine: each sentence against the best sentence of its cited text."""
    if not rows:
        return
    groups = [[t for txt in c for t in split_sentences(txt)] or c for c in cited]
    flat = [t for g in groups for t in g]
    vecs = np.asarray(embeddings.embed_documents(texts + flat), np.float32)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    offset = len(texts)
    for k, row in enumerate(rows):
        group = vecs[offset:offset + len(groups[k])]
        offset += len(groups[k])
        row["cosine"] = round(float((group @ vecs[k]).max()), 3) if len(group) else 0.0


def is_supported(row: dict[str, Any], threshold: float) -> tuple[float, bool]:
    """Return a sentence's support (the better of its figures) and whether it is supported.

    `threshold` is the run's sentence_support_threshold.
    """
    cosine = row["cosine"] if row.get("cosine_allowed") else None
    support = max(row["lexical"], cosine or 0.0)
    ok = support >= threshold and not row["unsupported_tokens"]
    return support, ok


def cited_text(chunk: ChunkDict) -> str:
    """A cited chunk's text as its answer units read it.

    A chunk that opens inside a long table reads its rows with the table's header cells
    (metadata `table_header`, `textbound.text.units.chunk_units`), so the header is cited too;
    a reference entry's code title ("`os.homedir()`", answer/named_section.py) is cited with
    the sentences it is the subject of.
    """
    header = (chunk.get("metadata") or {}).get("table_header")
    text = f"{header}\n{chunk['text']}" if header else chunk["text"]
    title = code_title(chunk)  # a reference entry's "`os.homedir()`" is what it is about
    return f"{title}\n{text}" if title else text


def fill_cosines(rows: list[dict[str, Any]], sentences: list[dict[str, Any]],
                 by_id: dict[str, ChunkDict], threshold: float, embeddings: Any) -> None:
    """Compute cosine support for the sentences lexical containment leaves in doubt."""
    doubtful = [i for i, r in enumerate(rows) if r["valid_citations"]
                and r["lexical"] < threshold and r["cosine_allowed"]]
    cosine_rows([rows[i] for i in doubtful], [str(sentences[i]["text"]) for i in doubtful],
                [[cited_text(by_id[c]) for c in sentences[i]["citations"] if c in by_id]
                 for i in doubtful], embeddings)


def recite(rows: list[dict[str, Any]], sentences: list[dict[str, Any]],
           evidence: list[ChunkDict], threshold: float, weigh: Weigher, embeddings: Any) -> int:
    """Re-cite each failing sentence to an evidence passage that supports it; return how many.

    Only sentences that cite something valid are tried (a missing or unknown citation stays a
    refusal), and only passages that pass every check on their own; the best one wins.
    """
    n = 0
    for i, row in enumerate(rows):
        if not row["valid_citations"] or row["citations"] != row["valid_citations"]:
            continue
        if is_supported(row, threshold)[1]:
            continue
        text = str(sentences[i]["text"])
        best: tuple[float, str, dict[str, Any]] | None = None
        for chunk in evidence:
            if chunk["chunk_id"] in sentences[i]["citations"]:
                continue
            trial = assess(text, chunk["text"], weigh, True)
            if trial["unsupported_tokens"]:
                continue
            if trial["lexical"] < threshold and trial["cosine_allowed"]:
                cosine_rows([trial], [text], [[chunk["text"]]], embeddings)
            support, ok = is_supported(trial, threshold)
            if ok and (best is None or support > best[0]):
                best = (support, chunk["chunk_id"], trial)
        if best is None:
            continue
        _support, cid, trial = best
        row.update(trial)
        row["recited"] = {"from": list(sentences[i]["citations"]), "to": [cid]}
        sentences[i]["citations"] = [cid]
        n += 1
    return n
