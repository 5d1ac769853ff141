"""What to build, rendered from a lesson's figures: the decision line and the keep rule.

A verdict says what the questions showed ("gain", "loss", "equivalent", "cannot tell"); a learner
who came to build RAG on their own site needs the next sentence too: use the technique or not, and
why. That sentence is rendered here from the same comparisons, plus what the technique buys beyond
recall (no truncation, whole tables and code, fewer tokens read), which no recall figure measures.

The rule is declared before any result is read (`KEEP_RULE`), so lesson 09's "kept" column is
its output, not a judgement typed beside the figures. `main_verdict_table` is the ONE verdict table a
lesson's main path shows: three columns of figures and a footnote line naming the test, the levels
and the family.
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from IPython.display import HTML

from course_lib import settings
from course_lib.evaluation.compare import Comparison, holm_adjust, paired_comparison
from course_lib.evaluation.display import html_table
from course_lib.evaluation.results import RunResult
from course_lib.evaluation.verdicts import (
    CANNOT_TELL,
    EQUIVALENT,
    GAIN,
    LOSS,
    Verdict,
    family_caption,
    interval_caption,
    interval_text,
    word,
)

KEEP_RULE = ("Declared before the results: a technique is **kept** when it gains on some metric and loses "
             "on none, or when it loses on none and buys something named beyond recall (equivalent: shown "
             "harmless within the margin; cannot tell: no loss shown); it is **dropped** when it loses on "
             "any metric, or when it neither gains nor buys anything.")



@dataclass(frozen=True)
class Recorded:
    """A verdict kept as its figures' text and its word (e.g. lesson 09's pandas steps, from
    `step_figures`): evidence the rule weighs like a comparison."""

    text: str
    word: str


Evidence = Comparison | Mapping[str, Comparison | Recorded]


@dataclass(frozen=True)
class Decision:
    """The rule's answer for one technique: `kept`, and `why` in a clause that names its evidence."""

    technique: str
    kept: bool
    why: str


def _labelled(evidence: Evidence) -> dict[str, Comparison | Recorded]:
    """Evidence as {label: comparison}; a lone comparison is labelled by its metric."""
    return {evidence.metric: evidence} if isinstance(evidence, Comparison) else dict(evidence)


def _word(item: Comparison | Recorded) -> str:
    return item.word if isinstance(item, Recorded) else word(item)


def _figures(label: str, item: Comparison | Recorded) -> str:
    """"test recall@5 +0.070 [+0.010, +0.150] (98.3%), 21 better / 7 worse": what a clause rests on."""
    if isinstance(item, Recorded):
        return f"{label} {item.text}"
    return f"{label} {interval_text(item)}, {item.wins} better / {item.losses} worse"


def _named(evidence: dict[str, Comparison | Recorded], verdict_word: str) -> list[str]:
    return [_figures(label, c) for label, c in evidence.items() if _word(c) == verdict_word]


def _moved_none(item: Comparison | Recorded) -> bool:
    return isinstance(item, Comparison) and item.wins == item.losses == 0


def decide(technique: str, evidence: Evidence, *, buys: str | None = None) -> Decision:
    """Apply `KEEP_RULE` to one technique's comparisons (each WITH the technique against without).

    `evidence` is one comparison or {label: comparison} ("test recall@5", "pandas MRR"); `buys`
    names what the technique gives beyond recall, or None when it gives nothing a reader could name.
    """
    labelled = _labelled(evidence)
    if not labelled:
        raise ValueError(f"no evidence for '{technique}': pass at least one comparison")
    losses, gains = _named(labelled, LOSS), _named(labelled, GAIN)
    if losses:
        return Decision(technique, False, f"it loses on {'; '.join(losses)}")
    if gains:
        return Decision(technique, True, f"it gains on {'; '.join(gains)}")
    if buys is None:
        return Decision(technique, False, "it gains on nothing here and buys nothing named")
    why = f"it buys {buys}"
    equivalent = _named(labelled, EQUIVALENT)
    if equivalent:
        why += f", and it is equivalent on {'; '.join(equivalent)}"
    unsure = {label: c for label, c in labelled.items() if _word(c) == CANNOT_TELL}
    still = [label for label, c in unsure.items() if _moved_none(c)]
    unclear = [label for label in unsure if label not in still]
    if still:
        why += f"; on {', '.join(still)} it moved no question"
    if unclear:
        why += f"; no loss was shown on {', '.join(unclear)} ({CANNOT_TELL})"
    return Decision(technique, True, why)

def decision_line(technique: str, evidence: Evidence, *, buys: str | None = None,
                  when: str | None = None) -> Verdict:
    """The sentence a Takeaway ends with: what to do on your own site, when, and why, from the figures.

    "**Decision: use re-ranking** when the answer is often retrieved but ranked too low: it gains on
    test MRR +0.051 [+0.004, +0.100] (97.5%), 30 better / 12 worse." The verb follows `decide`, so a
    change of data that turns a gain into a loss turns "use" into "leave out".
    """
    d = decide(technique, evidence, buys=buys)
    verb = "use" if d.kept else "leave out"
    condition = f" {when}" if when else ""
    return Verdict(f"**Decision: {verb} {technique}**{condition}: {d.why}.")


# Each lesson's step against the pipeline just before it, then the whole course against lesson 01:
# (from, to, label). Lesson 10 judges them on its site, and lesson 09 recomputes them on pandas for its
# decision table, so no lesson depends on another having run first.
SITE_STEPS = (("naive", "clean", "parsing instead of regex stripping (03)"),
              ("clean", "structured", "chunks that follow structure (04)"),
              ("structured", "context", "the context line (04)"),
              ("context", "limited", "splitting long blocks (05)"),
              ("limited", "hybrid", "BM25 fused by RRF (06)"),
              ("hybrid", "reranked", "MaxSim re-ranking (07)"),
              ("naive", "reranked", "the whole course against lesson 01"))


def site_steps(runs: Mapping[str, RunResult], *, family: str,
               metrics: Sequence[str] = settings.PRIMARY_METRICS) -> dict[str, Comparison]:
    """Every `SITE_STEPS` row on each metric, corrected as ONE Holm family, keyed "label (metric)".

    `runs` maps each pipeline name the steps use to its run on the same questions. The same runs
    give the same words wherever this is called, which is why lesson 09 calls it rather than
    reading lesson 10's record.
    """
    missing = sorted({name for a, b, _ in SITE_STEPS for name in (a, b)} - set(runs))
    if missing:
        raise ValueError(f"site_steps needs a run of every step's pipeline; missing: {', '.join(missing)}")
    comparisons = holm_adjust([paired_comparison(runs[a], runs[b], metric=m)
                               for m in metrics for a, b, _ in SITE_STEPS], family=family)
    keys = [f"{label} ({m})" for m in metrics for _, _, label in SITE_STEPS]
    return dict(zip(keys, comparisons, strict=True))


def step_figures(c: Comparison) -> dict[str, object]:
    """One step's figures as a lesson records them (JSON): its pipelines, difference, questions
    better and worse, Holm p, word and the interval the word rests on."""
    return {"from": c.name_a, "to": c.name_b, "delta": c.delta, "wins": c.wins, "losses": c.losses,
            "p_holm": c.p, "verdict": word(c), "interval_text": interval_text(c)}


def kept_rows(decisions: Sequence[Decision]) -> list[tuple[str, str, str]]:
    """Lesson 09's decision-table columns from the rule: (technique, "yes"/"no", why)."""
    return [(d.technique, "yes" if d.kept else "no", d.why) for d in decisions]


def main_verdict_table(comparisons: Sequence[Comparison], *, what: Sequence[str] | None = None,
                       family: str | None = None, holm: bool = True) -> HTML:
    """A main path's one verdict table, three columns wide, with its small print in one footnote.

    Each row: the difference with the interval its word rests on, the questions better / worse, the
    word. The footnote names the test(s), the intervals' levels and the Holm family, so the table
    is as narrow as a learner reads and nothing it rests on is hidden. Wider tables
    (`verdicts.verdict_table`) belong under "Going further".
    """
    comparisons = holm_adjust(comparisons, family=family) if holm else list(comparisons)
    labels = list(what) if what is not None else [f"{c.name_b} against {c.name_a}, {c.metric}"
                                                 for c in comparisons]
    if len(labels) != len(comparisons):
        raise ValueError(f"{len(labels)} labels for {len(comparisons)} comparisons")
    kinds = {GAIN: "cl-gain", LOSS: "cl-loss"}
    rows = [(kinds.get(word(c), "cl-none"),
             [html.escape(label), html.escape(interval_text(c)), f"{c.wins} / {c.losses}",
              f"<b>{html.escape(word(c))}</b>"]) for c, label in zip(comparisons, labels, strict=True)]
    table = html_table(["comparison", "difference [interval the word rests on]", "questions better / worse",
                        "verdict"], rows)
    return HTML(table.data + f"<p><small><i>{html.escape(footnote(comparisons))}</i></small></p>")


def footnote(comparisons: Sequence[Comparison]) -> str:
    """One line under the main verdict table: the test(s), the intervals' levels, the family (each
    family once, when rows corrected in different families share the table)."""
    by_test: dict[str, list[str]] = {}
    for c in comparisons:
        metrics = by_test.setdefault(c.test, [])
        metrics += [c.metric] if c.metric not in metrics else []
    tests = ", ".join(f"{test} ({', '.join(metrics)})" for test, metrics in by_test.items())
    families: dict[str | None, list[Comparison]] = {}
    for c in comparisons:
        families.setdefault(c.family_name, []).append(c)
    named = " ".join(family_caption(group) for group in families.values())
    return f"Test: {tests}. {interval_caption(comparisons)} {named}".strip()
