"""A first draft of a golden set for a new site: sampled evidence, questions left to a person.

Writing the questions is the part only a person can do (lesson 02's rules: ask as a user would,
without the evidence's words). Finding a spread of checkable evidence is mechanical, so
`draft_golden` does it: it parses the pages with the course parser, collects candidate evidence
(one sentence, table row or code line from one block, within the golden set's evidence limits:
`golden.evidence_problem`, the validator's own rule), and samples them
round-robin across block kinds and pages, one per section. Each line it writes has
`"question": ""` and a kind guessed from the block; `unwritten` lists the lines still without a
question, and `validate-golden` checks the evidence, sections and kinds against the pages.

    python -m course_lib golden-draft --corpus DIR --out FILE [--n 40]
"""
from __future__ import annotations

import json
import logging
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from course_lib import settings
from course_lib.core.splitting import split_sentences
from course_lib.evaluation.golden import evidence_problem, normalize
from course_lib.infra.files import atomic_write
from course_lib.infra.safe_text import safe
from course_lib.records import Block

log = logging.getLogger("course_lib.golden_draft")

_CONTEXT_START = re.compile(r"^(Changed in version|Deprecated since|New in version|Note|Warning)\b",
                            re.IGNORECASE)
_CODE_LIKE = re.compile(r"[=()\[\]_]|\w\.\w")
KIND_OF_BLOCK = {"table": "table", "code": "code"}  # a guess the writer corrects; see `guess_kind`


@dataclass(frozen=True)
class Draft:
    """One drafted golden line: everything but the question."""

    id: str
    question: str
    doc: str
    section: str
    evidence: str
    kind: str
    split: str


def candidate_pieces(block: Block) -> list[str]:
    """The pieces of a block a question could quote: its sentences (prose, cut by the chunker's
    `split_sentences`), its lines (tables, code, lists), kept when `evidence_problem` accepts
    them (`golden.MIN_EVIDENCE_WORDS` to `MAX_EVIDENCE_WORDS` words, at most `MAX_EVIDENCE_CHARS`
    characters), so every drafted quote passes the validator."""
    lines = [line.strip() for line in block.text.splitlines() if line.strip()]
    if block.kind not in ("table", "code"):
        lines = [s.strip() for line in lines for s in split_sentences(line)]
    return [p for p in lines if evidence_problem(p) is None]


def guess_kind(block: Block, piece: str) -> str:
    """The question kind a piece suggests: table/code by block, "context" for version notes and
    warnings, "exact" for code-like prose (names, values, signatures), else "paraphrase"."""
    if block.kind in KIND_OF_BLOCK:
        return KIND_OF_BLOCK[block.kind]
    if _CONTEXT_START.match(piece):
        return "context"
    return "exact" if _CODE_LIKE.search(piece) else "paraphrase"


def _nameable(blocks: Mapping[str, Sequence[Block]]) -> dict[str, Sequence[Block]]:
    """The pages a golden file (UTF-8 JSON) can name; one warning line names those it cannot: a
    file name that is not UTF-8 (`caf\\xe9.html` from an old Latin-1 system) has no UTF-8 text."""
    kept, left = {}, []
    for doc, page in blocks.items():
        try:
            doc.encode("utf-8")
        except UnicodeEncodeError:
            left.append(doc)
            continue
        kept[doc] = page
    if left:
        names = ", ".join(safe(d.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
                               one_line=True) for d in left[:3])
        log.warning("golden-draft: left out %d page(s) whose file name is not UTF-8, which a golden file "
                    "cannot name: %s%s — rename them to UTF-8 to draft from them", len(left), names,
                    ", ..." if len(left) > 3 else "")
    return kept


def candidates(blocks: Mapping[str, Sequence[Block]]) -> list[tuple[str, Block, str]]:
    """(page, block, piece) for every quotable piece found on exactly one page: the judge matches
    evidence on the gold page only, so a quote repeated across pages (shared docstrings,
    furniture) could never be told apart."""
    found = [(doc, b, piece) for doc, page in blocks.items() for b in page
             if b.section_id and b.kind != "heading" for piece in candidate_pieces(b)]
    pages_of: dict[str, set[str]] = defaultdict(set)
    for doc, _, piece in found:
        pages_of[normalize(piece)].add(doc)
    return [(doc, b, piece) for doc, b, piece in found if len(pages_of[normalize(piece)]) == 1]


def _round_robin(groups: Iterable[list]) -> Iterable:
    queues = [list(g) for g in groups if g]
    while queues:
        for queue in list(queues):
            yield queue.pop(0)
            if not queue:
                queues.remove(queue)


def draft_golden(blocks: Mapping[str, Sequence[Block]], *, n: int = settings.GOLDEN_DRAFT_SIZE,
                 seed: int = settings.SEED,
                 prefix: str = "draft") -> list[Draft]:
    """Sample n drafted lines: round-robin over guessed kinds, within a kind over pages, one per
    section, in a shuffled but seeded order; splits alternate dev, test like the shipped sets."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    rng = random.Random(seed)  # noqa: S311 - a seeded, reproducible sample of drafts, not a secret
    by_kind: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for doc, block, piece in candidates(_nameable(blocks)):
        by_kind[guess_kind(block, piece)][doc].append((doc, block, piece))
    per_kind = []
    for kind in sorted(by_kind):
        docs = sorted(by_kind[kind])
        rng.shuffle(docs)
        for doc in docs:
            rng.shuffle(by_kind[kind][doc])
        per_kind.append([(kind, c) for c in _round_robin(by_kind[kind][doc] for doc in docs)])
    drafts: list[Draft] = []
    sections: set[tuple[str, str]] = set()
    for kind, (doc, block, piece) in _round_robin(per_kind):
        if len(drafts) == n:
            break
        if (doc, block.section_id) in sections:
            continue
        sections.add((doc, block.section_id))
        drafts.append(Draft(f"{prefix}{len(drafts) + 1:03d}", "", doc, block.section_id, piece, kind,
                            "dev" if len(drafts) % 2 == 0 else "test"))
    return drafts


def write_drafts(drafts: Sequence[Draft], path: str | Path) -> None:
    """One JSON object per line, in the golden file's field order, written atomically: an
    interrupted run leaves the old file as it was."""
    atomic_write(path, "".join(json.dumps(asdict(d), ensure_ascii=False) + "\n" for d in drafts))


def unwritten(path: str | Path) -> list[str]:
    """Ids of the drafted lines whose question is still empty (validate-golden checks evidence,
    not whether a person wrote the question)."""
    rows = map(json.loads, filter(str.strip, Path(path).read_text(encoding="utf-8").splitlines()))
    return [r["id"] for r in rows if not str(r.get("question", "")).strip()]
