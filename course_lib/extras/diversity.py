"""How varied the top results are, and two measured fixes: a per-page cap and MMR.

The chunking lesson's thread question got three of its top five from one interview page: a ranking
problem, not a chunking one. These functions count that, and re-order a ranking so one page
cannot fill the prompt.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from course_lib import settings
from course_lib.records import Chunk, Hit


def top_page_share(hits: Sequence[Hit], chunks: Sequence[Chunk], *, k: int = settings.PROMPT_CHUNKS) -> float:
    """The largest share of the top k taken by a single page (1/k = all different, 1.0 = one page)."""
    pages = Counter(chunks[h.index].doc for h in hits[:k])
    return max(pages.values()) / min(k, len(hits)) if hits else 0.0


def cap_per_page(hits: Sequence[Hit], chunks: Sequence[Chunk], *,
                 max_per_page: int = settings.MAX_CHUNKS_PER_PAGE) -> list[Hit]:
    """Keep the ranking, but move every hit beyond a page's first `max_per_page` to the end.

    Nothing is dropped: the surplus keeps its relative order after the capped list, so recall@20
    can only change by what is pushed out of the top 20.
    """
    seen: Counter = Counter()
    kept, surplus = [], []
    for hit in hits:
        page = chunks[hit.index].doc
        seen[page] += 1
        (kept if seen[page] <= max_per_page else surplus).append(hit)
    return kept + surplus


def mmr(hits: Sequence[Hit], vectors: np.ndarray, query_vector: np.ndarray, *,
        weight: float = settings.MMR_WEIGHT,
        k: int | None = None) -> list[Hit]:
    """Maximal marginal relevance: greedily pick the hit that best trades relevance to the query
    (cosine, weight `weight`) against similarity to what was already picked (1 - weight).

    `vectors` are the unit chunk vectors indexed like `hits[i].index`. weight=1 keeps the
    original order of a dense ranking; lower values favour variety.
    """
    remaining = list(hits)
    picked: list[Hit] = []
    relevance = {h.index: float(vectors[h.index] @ query_vector) for h in remaining}
    limit = len(remaining) if k is None else min(k, len(remaining))
    while remaining and len(picked) < limit:
        def gain(hit: Hit) -> float:
            redundancy = max((float(vectors[hit.index] @ vectors[p.index]) for p in picked), default=0.0)
            return weight * relevance[hit.index] - (1 - weight) * redundancy
        best = max(remaining, key=lambda h: (gain(h), -h.index))
        remaining.remove(best)
        picked.append(Hit(best.index, gain(best)))
    return picked
