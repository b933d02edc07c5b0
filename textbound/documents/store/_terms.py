"""A collection's term statistics, counted from its chunks' text (`BaseStore.term_stats`).

One pass over every chunk's text and heading path counts the content words (IDF), keeps the
words as written (the names the collection uses), the adjacent capitalised pairs, the names
joined to a number ("sha-1") and the words that open code blocks; when those words make command
heads ("git"), a second pass collects what follows each head anywhere in the text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from textbound.documents.store._types import TermStats
from textbound.text import compound_names, content_words, name_pairs, surface_words
from textbound.text.commands import block_openings, code_heads, following_words, word_heads

__all__ = ["count_terms"]


def count_terms(chunks: Iterable[tuple[str, Sequence[str]]],
                texts: Callable[[], Iterable[str]]) -> TermStats:
    """Return the statistics of chunks given as (text, heading path).

    `texts` reads the chunks' text again for the second pass, which runs only when the
    collection has command heads.
    """
    df: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    names: set[str] = set()
    compounds: set[str] = set()
    openings: list[tuple[str, str]] = []  # each code block's opening word and the token after
    n = 0
    for text, path in chunks:
        n += 1
        df.update(set(content_words(text)))
        words = surface_words(text + "\n" + " ".join(map(str, path)), lower=False)
        seen.update(words)
        counts.update({w.lower() for w in words})
        names.update(name_pairs(text))
        compounds.update(c.lower() for c in compound_names(text, named=False))
        openings += block_openings(text)
    heads = code_heads(Counter(head for head, _ in openings), len(openings))
    commands: dict[str, set[str]] = {h: set() for h in heads}
    if heads:  # a second pass: what follows each head, in prose or code
        for text in texts():
            for h, after in following_words(text, heads).items():
                commands[h] |= after
    return TermStats(n, dict(df), frozenset(seen), frozenset(w.lower() for w in seen),
                     dict(counts), frozenset(names),
                     {h: frozenset(w) for h, w in commands.items()}, frozenset(compounds),
                     word_heads(openings, heads))
