"""No verdict changes with the random seed: the sign-flip test draws until its side of every Holm
level is settled, so lessons 09 and 10 print the same word under any seed.

The lessons' per-question values are recorded in tests/fixtures/seed_stability/ (one JSON file
per lesson: every Holm family the lesson corrects, each row's metric and the two runs' values per
question). Record them again after the lessons' pipelines change, from the repository root:

    python tests/test_seed_stability.py notebooks/09_what_moved_the_needle.ipynb \
        tests/fixtures/seed_stability/09.json

which executes the lesson with `compare_values` and `holm_adjust` watched (minutes: it builds
every pipeline of the lesson).
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib.evaluation.compare import PERMUTATION, Comparison, compare_values, holm_adjust
from course_lib.evaluation.stats import sign_flip_p_value, sign_flip_test
from course_lib.evaluation.verdicts import word

FIXTURES = Path(__file__).parent / "fixtures" / "seed_stability"
SEEDS = (0, 1, 2, 3, 4)
OLD_DRAWS = 10_000  # what the sign-flip test drew before, whatever p


def _families(lesson: str) -> list[dict]:
    """The lesson's recorded Holm families, each once."""
    seen, families = set(), []
    for family in json.loads((FIXTURES / f"{lesson}.json").read_text()):
        key = (family["family"], tuple((r["metric"], tuple(r["a"]), tuple(r["b"])) for r in family["rows"]))
        if key not in seen:
            seen.add(key)
            families.append(family)
    return families


def _at_seed(c: Comparison, seed: int, *, draws: int | None = None) -> Comparison:
    """The comparison as the given seed would compute it. Only the permutation p depends on the
    seed for a word (the McNemar test and both equivalence tests are exact, and the BCa interval
    decides nothing); `draws` fixes the number of sign patterns, as the course did before."""
    if c.test != PERMUTATION or not np.any(c.differences):
        return c
    if draws is None:
        p = sign_flip_p_value(c.differences, seed=seed)
    else:
        p = sign_flip_test(c.differences, seed=seed, n_resamples=draws, max_resamples=draws).p_value
    return dataclasses.replace(c, p_value=p, seed=seed)


def lesson_words(lesson: str, *, seeds=SEEDS, draws: int | None = None) -> dict[tuple, list[str]]:
    """Every verdict word of a lesson under each seed: {(family number, family, row, metric, runs):
    [word per seed]} (lesson 09 names three families "the dev column")."""
    words: dict[tuple, list[str]] = {}
    for number, family in enumerate(_families(lesson)):
        rows = [compare_values(np.array(r["a"]), np.array(r["b"]), metric=r["metric"],
                               names=tuple(r["names"] or ("A", "B"))) for r in family["rows"]]
        for seed in seeds:
            judged = holm_adjust([_at_seed(c, seed, draws=draws) for c in rows], family=family["family"],
                                 family_kind=family["kind"])
            for index, c in enumerate(judged):
                key = (number, family["family"], index, c.metric, f"{c.name_b} against {c.name_a}")
                words.setdefault(key, []).append(word(c))
    return words


@pytest.mark.parametrize("lesson", ["09", "10"])
def test_every_verdict_of_the_lesson_is_the_same_under_five_seeds(lesson):
    words = lesson_words(lesson)
    assert len(words) >= 20, f"lesson {lesson}: only {len(words)} verdicts recorded"
    changing = {key: seen for key, seen in words.items() if len(set(seen)) > 1}
    assert not changing, changing
    assert {seen[0] for seen in words.values()} >= {"gain", "cannot tell"}  # the words are not all one


# A paired sample whose sign-flip p lies at 0.0484, inside 10,000 draws' Monte Carlo error of 0.05
# (0.0022) but 4 errors of the capped draws (0.0002) away from it.
_BASE = np.random.default_rng(2026).choice([-1, -0.5, -0.25, 0.25, 0.5, 1.0, 0, 0], size=200)
NEAR_THE_LEVEL = np.round(_BASE - _BASE.mean() + 0.0797, 6)


def test_a_p_near_005_flipped_with_the_old_draws_and_does_not_now():
    old = [sign_flip_test(NEAR_THE_LEVEL, seed=seed, n_resamples=OLD_DRAWS, max_resamples=OLD_DRAWS).p_value
           for seed in range(10)]
    assert {p < 0.05 for p in old} == {True, False}, old  # "gain" under some seeds, "cannot tell" under others
    new = [sign_flip_test(NEAR_THE_LEVEL, seed=seed) for seed in range(10)]
    assert all(t.p_value < 0.05 - 4 * t.error for t in new), [(t.p_value, t.error) for t in new]
    assert all(t.resamples > OLD_DRAWS for t in new)  # it drew more because p sat near the level
    words = {word(compare_values(np.zeros(200), NEAR_THE_LEVEL, metric="mrr", seed=seed)) for seed in range(5)}
    assert words == {"gain"}


def _record(notebook: str, out: str) -> None:
    """Execute a lesson with `compare_values` and `holm_adjust` watched; write every Holm family's
    rows (metric, run names, both runs' per-question values, the word this run printed) to `out`."""
    import nbformat
    from nbclient import NotebookClient

    watch = '''
import json as _json, numpy as _np
import course_lib.evaluation.compare as _cmp, course_lib.evaluation.verdicts as _ver
_SEEN, _KEEP, _FAMILIES = {}, [], []
_compare_values, _holm_adjust = _cmp.compare_values, _cmp.holm_adjust
def _values(x):
    return [round(float(v), 9) for v in _np.asarray(x, dtype=float)]
def _watched_compare(a, b, **options):
    c = _compare_values(a, b, **options)
    _SEEN[id(c)] = dict(a=_values(a), b=_values(b), metric=options["metric"], names=options.get("names"))
    _KEEP.append(c)
    return c
def _watched_holm(comparisons, **options):
    comparisons = list(comparisons)
    out = _holm_adjust(comparisons, **options)
    for before, after in zip(comparisons, out):
        _SEEN[id(after)] = _SEEN[id(before)]
        _KEEP.append(after)
    _FAMILIES.append(dict(family=out[0].family_name, kind=out[0].family_kind,
                          rows=[dict(_SEEN[id(c)], word=_ver.word(c)) for c in out]))
    return out
_cmp.compare_values, _cmp.holm_adjust, _ver.holm_adjust = _watched_compare, _watched_holm, _watched_holm
'''
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(watch))
    nb.cells.append(nbformat.v4.new_code_cell(f"Path = __import__('pathlib').Path\n"
                                              f"Path({str(Path(out).resolve())!r}).write_text(_json.dumps(_FAMILIES))"))
    NotebookClient(nb, timeout=3600, resources={"metadata": {"path": str(Path(notebook).parent)}}).execute()


if __name__ == "__main__":
    _record(*sys.argv[1:3])
