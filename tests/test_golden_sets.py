"""Data tests of the two shipped golden sets: valid against their corpora, large enough to
resolve the course's effects, balanced, written by a protocol that never looks at a chunker.

The protocol itself is in data/golden/README.md; what can be checked by code is checked here.
"""
from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from course_lib.core.load import ensure_corpus, load_pages
from course_lib.evaluation.golden import KINDS, load_golden, normalize
from course_lib.evaluation.golden_checks import validate_golden, visible_soup
from course_lib.infra.paths import DATA_DIR, REPO_ROOT

GOLDEN_DIR = DATA_DIR / "golden"


@dataclass(frozen=True)
class GoldenSet:
    file: Path
    corpus: str
    min_per_split: int  # answerable questions in each of dev and test
    min_paraphrase: float  # share of paraphrase questions (the kind dense retrieval is for)
    readme_heading: str  # the README section that states this file's counts


SETS = {
    "python": GoldenSet(GOLDEN_DIR / "golden.jsonl", "python", 180, 0.35, "## Kinds and splits"),
    "pandas": GoldenSet(GOLDEN_DIR / "pandas.jsonl", "pandas", 100, 0.33, "## The pandas set"),
}
# The data scripts that write or select golden questions: none may import a chunker or a pipeline.
# (scripts/golden_pool.py runs every pipeline, but only adds `also` places; see its test.)
GOLDEN_SCRIPTS = ("golden_authoring.py", "golden_add.py", "golden_units.py")
CHUNKER_MODULES = ("course_lib.core.naive", "course_lib.core.chunking", "course_lib.core.splitting",
                   "course_lib.core.pipeline", "course_lib.extras.peers", "course_lib.extras.peer_chunkers")


@pytest.fixture(scope="module", params=list(SETS))
def golden_set(request):
    spec = SETS[request.param]
    return spec, load_golden(spec.file), load_pages(corpus=spec.corpus)


def test_every_question_is_valid_against_its_corpus(golden_set):
    spec, _, _ = golden_set
    assert validate_golden(spec.file, ensure_corpus(corpus=spec.corpus)) == []


def test_each_split_has_enough_answerable_questions_to_resolve_the_steps(golden_set):
    spec, questions, _ = golden_set
    per_split = Counter(q.split for q in questions if q.answerable)
    assert min(per_split["dev"], per_split["test"]) >= spec.min_per_split, per_split


def test_kinds_are_balanced_between_the_splits_and_mixed_as_planned(golden_set):
    spec, questions, _ = golden_set
    counts = Counter((q.kind, q.split) for q in questions)
    for kind in KINDS:
        assert counts[kind, "dev"] > 0 and abs(counts[kind, "dev"] - counts[kind, "test"]) <= 1, kind
    shares = Counter(q.kind for q in questions)
    assert shares["paraphrase"] / len(questions) >= spec.min_paraphrase
    assert 0.03 <= shares["unanswerable"] / len(questions) <= 0.08


def test_each_quote_occurs_on_its_own_page_only(golden_set):
    _, questions, pages = golden_set
    texts = {page.path: normalize(visible_soup(page.html).get_text()) for page in pages}
    for q in questions:
        if q.answerable:
            found = [doc for doc, text in texts.items() if normalize(q.evidence) in text]
            assert found == [q.doc], (q.id, found)


def test_the_readme_states_the_counts_in_the_file(golden_set):
    spec, questions, _ = golden_set
    readme = (GOLDEN_DIR / "README.md").read_text(encoding="utf-8")
    start = readme.index(spec.readme_heading)
    section = readme[start:readme.find("\n## ", start + 1)]
    rows = re.findall(r"^\| `?(\w+)`? \|(?:[^|]*\|)?? (\d+) \| (\d+) \| (\d+) \|$", section, re.MULTILINE)
    counts = Counter((q.kind, q.split) for q in questions)
    assert {kind for kind, *_ in rows} == set(KINDS)
    for kind, dev, test, total in rows:
        assert (int(dev), int(test), int(total)) == (counts[kind, "dev"], counts[kind, "test"],
                                                      counts[kind, "dev"] + counts[kind, "test"])


def test_the_first_130_python_questions_are_unchanged():
    """q001-q130 keep their text, ids and splits; pooling may only add `also` places to them, and
    answer units only `fragments`."""
    lines = SETS["python"].file.read_text(encoding="utf-8").splitlines()[:130]
    without_also = [json.dumps({k: v for k, v in json.loads(line).items() if k not in ("also", "fragments")},
                               ensure_ascii=False)
                    for line in lines]
    digest = hashlib.sha256("\n".join(without_also).encode()).hexdigest()
    assert digest == "c42ebcbf7aa644251e69487f9a018beebb6746b29d7403be67ab1e7c05db28d1"


@pytest.mark.parametrize("name", ["python", "pandas"])
def test_pooled_also_places_are_counted_in_the_pool_record(name):
    """Every `also` place in the golden file is one the pool record counts, none more, none fewer."""
    record = json.loads((SETS[name].file.parent / "pool" / f"{name}.json").read_text(encoding="utf-8"))
    questions = load_golden(SETS[name].file)
    with gzip.open(SETS[name].file.parent / "pool" / f"{name}.pooled.json.gz", "rt", encoding="utf-8") as handle:
        pooled = set(json.load(handle)["questions"])
    # A replacement (data/golden/retired.jsonl) was pooled under the id it replaced.
    original = {r["replaced_by"]: r["id"] for r in retired_lines()}
    assert pooled == {original.get(q.id, q.id) for q in questions if q.answerable}
    assert record["set"] == name and record["questions"] == len(pooled)
    assert sum(len(q.also) for q in questions) == record["also_places"] > 0
    assert sum(bool(q.also) for q in questions) == record["questions_with_also"]
    assert record["places_marked_answering"] == (record["also_places"] + record["rejected_places"]
                                                 + record.get("places_already_credited", 0))
    # The README names the one reason places were rejected for.
    assert set(record["rejected_reasons"]) == {"the quote is not in the pooled text that was read for this page"}


REPOOL_ROWS = {"pooled items": "pooled items", "items holding the answer unit": "holding the answer unit",
               "items the first pool had read": "read before",
               "items that held the quote but lack a fragment now": "held the quote, lack a fragment now",
               "new items, every sentence read before": "new items whose sentences were all read",
               "new items with unread sentences": "new items with unread sentences",
               "items read before whose text could not be rebuilt": "items read before whose text is not known now",
               "question-page texts read": "question_page_texts_read", "words read": "words_read"}


def test_the_readme_pool_table_states_both_pool_records():
    """Every figure of the README's pooled-judgments table is the one its set's pool record holds:
    the first pool, the re-pool after the judge and the peers' bounds changed, and both readings."""
    readme = (SETS["python"].file.parent / "README.md").read_text(encoding="utf-8")
    table_text = readme[readme.index("| pooled | Python | pandas |"):].split("\n\n")[0]
    rows = [row for row in re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", table_text, re.MULTILINE)
            if row[0] not in ("pooled", "---")]
    for column, name in enumerate(("python", "pandas"), start=1):
        record = json.loads((SETS[name].file.parent / "pool" / f"{name}.json").read_text(encoding="utf-8"))
        again = record.get("repool")  # a set not re-pooled yet shows "—" in those rows
        expected = {
            "questions pooled": record["questions"],
            "systems pooled, depth": f"{len(record['systems'])}, top {record['depth']}",
            "first pool: pooled items": record["pooled_items"],
            "first pool: items already holding the gold quote": record["holding_the_gold_quote"],
            "first pool: question-page texts read": record["question_page_texts_read"],
            **{f"re-pool: {row}": (again.get(key, 0) if again else "—") for row, key in REPOOL_ROWS.items()},
            "places marked as answering": record["places_marked_answering"],
            "places credited as `also`": record["also_places"],
            "places marked again (credited once)": record.get("places_already_credited", 0),
            "places rejected by validation": record["rejected_places"],
            "questions with at least one `also` place": record["questions_with_also"],
        }
        assert {row[0]: row[column] for row in rows} == {k: str(v) for k, v in expected.items()}, name


def test_every_python_content_page_has_at_least_three_questions():
    questions = load_golden(SETS["python"].file)
    per_page = Counter(q.doc for q in questions if q.answerable)
    stubs = {"library/asyncio.html", "library/ipc.html", "library/crypto.html", "library/html.html",
             "library/fileformats.html"}  # table-of-contents pages (data/pages.txt)
    content = [page.path for page in load_pages() if page.path not in stubs]
    assert len(content) == 57 and min(per_page[doc] for doc in content) >= 3


@pytest.mark.parametrize("script", GOLDEN_SCRIPTS)
def test_no_data_script_filters_questions_by_a_chunker(script):
    path = REPO_ROOT / "scripts" / script
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not imported & set(CHUNKER_MODULES), (script, imported & set(CHUNKER_MODULES))


def test_the_main_readme_states_the_python_sets_counts():
    questions = load_golden(SETS["python"].file)
    answerable = [q for q in questions if q.answerable]
    dev = sum(q.split == "dev" for q in answerable)
    text = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (f"a golden set of {len(questions)} questions ({len(answerable)} answerable: {dev} for choosing, "
            f"{len(answerable) - dev} for the final test)") in text


# A table question whose quote is a row's description needs the row's key (the name the question
# asks for) in the same chunk. Reviewed exceptions, each with why (data/golden/README.md):
KEY_NOT_THE_ANSWER = {
    "q048": "the row's first cell is the header 'Usage': the answer is the two descriptions",
    "q218": "the first cell is the step number of a worked trace, not a name a reader needs",
}
INDEX_COLUMN_KEYS = {"q050": "tm_wday", "q192": "tm_gmtoff"}  # the first column is an index


def test_every_table_question_carries_its_rows_key(golden_set):
    """Each table question (and `also` place) whose quote sits in a row's later cell has that row's
    key cell as a fragment, as `scripts/golden_units.py propose` finds it, unless reviewed above."""
    import golden_units as units  # scripts/golden_units.py (tests/conftest.py puts scripts/ on the path)
    spec_, questions, _ = golden_set
    corpus = ensure_corpus(corpus=spec_.corpus)
    soups: dict = {}
    missing = []
    for q in questions:
        if q.kind != "table" or not q.answerable or q.id in KEY_NOT_THE_ANSWER:
            continue
        for doc, quote, fragments in [(q.doc, q.evidence, q.fragments),
                                      *((p.doc, p.evidence, p.fragments) for p in q.also)]:
            soup = soups.get(doc) or soups.setdefault(doc, visible_soup((corpus / doc).read_text("utf-8")))
            key = units.row_key(soup, quote)[0]
            expected = INDEX_COLUMN_KEYS.get(q.id, key) if quote == q.evidence else key
            if key and normalize(expected) not in map(normalize, fragments):
                missing.append((q.id, doc, expected))
    assert missing == []
    readme = (GOLDEN_DIR / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"Reviewed: (\d+) Python and (\d+) pandas table questions carry their key", readme)
    with_key = sum(bool(q.fragments) for q in questions if q.kind == "table")
    assert with_key == int(stated[1 if spec_.corpus == "python" else 2]) > 0


RETIRED = GOLDEN_DIR / "retired.jsonl"


def retired_lines() -> list[dict]:
    """The retired questions: each old id, the id that replaced it and why."""
    return [json.loads(line) for line in RETIRED.read_text(encoding="utf-8").splitlines()]


def test_a_retired_id_is_never_reused_and_its_replacement_exists():
    """A changed question gets a new id; the old id never comes back (q001-q130 keep theirs)."""
    retired = retired_lines()
    ids = {q.id for spec in SETS.values() for q in load_golden(spec.file)}
    assert retired and all(r["id"] not in ids and r["replaced_by"] in ids and r["why"] for r in retired)
    assert not any(int(r["id"][1:]) <= 130 for r in retired if r["id"].startswith("q"))
    assert len({r["id"] for r in retired} | {r["replaced_by"] for r in retired}) == 2 * len(retired)


# A gold quote found in two blocks of its page is credited in either; reviewed, each says why
# every occurrence answers (data/golden/README.md). Anything else must be made unique by fragments.
EVERY_OCCURRENCE_ANSWERS = {"q039", "q112", "q113", "q304", "pd085", "pd091"}


def test_a_gold_answer_unit_is_one_place_on_its_page_unless_reviewed(golden_set):
    from course_lib.evaluation.golden_checks import block_texts
    spec, questions, _ = golden_set
    corpus, blocks_of = ensure_corpus(corpus=spec.corpus), {}
    repeated = []
    for q in questions:
        if not q.answerable or q.id in EVERY_OCCURRENCE_ANSWERS:
            continue
        if q.doc not in blocks_of:
            blocks_of[q.doc] = block_texts([visible_soup((corpus / q.doc).read_text("utf-8"))])
        blocks = blocks_of[q.doc]
        holding_quote = sum(normalize(q.evidence) in text for text in blocks)
        holding_unit = sum(all(normalize(piece) in text for piece in q.unit) for text in blocks)
        if holding_quote > 1 and (not q.fragments or holding_unit > 1):
            repeated.append(q.id)
    assert repeated == []


@pytest.mark.parametrize("name", ["python", "pandas"])
def test_the_leave_one_system_out_table_is_the_pools_own(name):
    """The README's leave-one-system-out table states what `golden_pool.py unique` computes."""
    import golden_pool as pool  # scripts/golden_pool.py (tests/conftest.py puts scripts/ on the path)

    counts = pool.unique_contributions(name)
    readme = (GOLDEN_DIR / "README.md").read_text(encoding="utf-8")
    column = 1 if name == "python" else 3
    for system, c in counts.items():
        row = re.search(rf"^\| {re.escape(system)} \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", readme, re.MULTILINE)
        assert row, system
        assert (int(row[column]), int(row[column + 1])) == (c["places"], c["questions"]), system
