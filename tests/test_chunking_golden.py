"""Golden output of the chunkers on the shipped corpora: a refactor of `chunk_blocks` or
`window_chunks` must give the same chunks, field for field, byte for byte.

Every chunk the pipelines' builders make (and the raw per-page output, before duplicates are
dropped) is written as canonical JSON, every `Chunk` field in order plus the embedded `text`, and
the whole list hashed. The digests were computed from the code before the refactor of issue 26 and written again
when issue 35's parse stage for any site moved blocks on purpose; a change that is meant to move
chunks updates them, and says so in its commit.

A digest alone cannot say which chunk moved, so each run that matches a recorded digest keeps those
chunks in the cache (`chunking_golden/<digest>.json.gz`, about 0.6 MB each); a later mismatch on the
same machine names the first chunk that differs, field by field. Run the test once before a change
and once after to see what the change moved.
"""
from __future__ import annotations

import ast
import dataclasses
import gzip
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import pytest

from course_lib.core import chunking, packing
from course_lib.core.chunking import chunk_blocks, window_chunks
from course_lib.core.load import load_pages
from course_lib.core.pipeline import (
    clean_corpus,
    context_chunks,
    page_title,
    structured_chunks,
    window_chunks_of,
)
from course_lib.infra.paths import cache_dir
from course_lib.records import Chunk, Page

SMALL_BUDGET = 96  # tokens: many blocks split, many chunks per section


def chunk_record(chunk: Chunk) -> list:
    """Every field of a chunk in declaration order, then its embedded text, JSON-ready."""
    return [[f.name, getattr(chunk, f.name)] for f in dataclasses.fields(chunk)] + [["text", chunk.text]]


def canonical(chunks: Sequence[Chunk]) -> str:
    """The canonical JSON of a chunk list (meta keys in the order the chunker wrote them)."""
    return json.dumps([chunk_record(c) for c in chunks], ensure_ascii=False, separators=(",", ":"))


def digest(chunks: Sequence[Chunk]) -> str:
    """sha256 of the canonical JSON of a chunk list."""
    return hashlib.sha256(canonical(chunks).encode("utf-8")).hexdigest()


def _kept(digest_hex: str) -> Path:
    return cache_dir() / "chunking_golden" / f"{digest_hex}.json.gz"


def keep_chunks(text: str, digest_hex: str) -> None:
    """Keep the canonical JSON of chunks that matched a recorded digest, for a later diff."""
    path = _kept(digest_hex)
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_bytes(gzip.compress(text.encode("utf-8")))
    partial.replace(path)


def _changed(name: str, old: object, new: object) -> str:
    """One field's change; for two texts, from 40 characters before their first differing one."""
    if isinstance(old, str) and isinstance(new, str):
        at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
        start = max(at - 40, 0)
        return f"{name} at character {at}: recorded {old[start:at + 80]!r} now {new[start:at + 80]!r}"
    return f"{name}: recorded {old!r:.160} now {new!r:.160}"


def first_difference(recorded: list, now: list) -> str:
    """Where two lists of chunk records first differ: the chunk's index, where it sits, and each field
    that changed (texts from just before their first differing character), or which list ends first."""
    for index, (old, new) in enumerate(zip(recorded, now, strict=False)):
        if old != new:
            fields = dict(new)
            changed = [_changed(name, value, fields.get(name, "(no such field)"))
                       for name, value in old if fields.get(name) != value]
            where = " > ".join([str(fields.get("doc")), *(fields.get("heading_path") or ())])
            return f"first differing chunk: #{index} ({where}); " + "; ".join(changed)
    common = min(len(recorded), len(now))
    if len(recorded) == len(now):
        return "the chunks are the same"
    ends, rest = ("now", recorded) if len(now) < len(recorded) else ("the recorded list", now)
    return f"the first {common} chunks agree; {ends} ends there, then: {rest[common]!r:.300}"


def golden_message(label: str, text: str, recorded_digest: str, count: int) -> str:
    """The failure message: the counts and digests, then the first differing chunk where the recorded
    chunks were kept on this machine."""
    head = f"{label}: {count} chunks, digest {hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}, recorded {recorded_digest[:12]}"
    kept = _kept(recorded_digest)
    if not kept.exists():
        return (f"{head}; the recorded chunks are not kept on this machine ({kept}): run this test on the "
                "commit that recorded the digest, then here again, to see the first differing chunk")
    return f"{head}; {first_difference(json.loads(gzip.decompress(kept.read_bytes())), json.loads(text))}"


def _raw(pages: Sequence[Page], chunker: Callable, **options) -> list[Chunk]:
    blocks, _, _ = clean_corpus(pages)
    return [chunk for doc, page_blocks in blocks.items()
            for chunk in chunker(page_blocks, doc=doc, title=page_title(page_blocks, doc), **options)]


BUILDERS: dict[str, Callable[[Sequence[Page]], list[Chunk]]] = {
    "structured": structured_chunks,
    "context (lesson 04)": context_chunks,
    "structured, no context": lambda pages: structured_chunks(pages, context=False),
    "structured, unsplit": lambda pages: structured_chunks(pages, split_long=False),
    "structured, small budget, overlap 1": lambda pages: structured_chunks(pages, budget=SMALL_BUDGET,
                                                                         overlap_blocks=1),
    "structured, no headings": lambda pages: structured_chunks(pages, headings=False),
    "raw chunk_blocks, small budget, margin": lambda pages: _raw(pages, chunk_blocks, budget=SMALL_BUDGET,
                                                                 margin=8, overlap_blocks=2),
    "windows": window_chunks_of,
    "windows within heading path, context": lambda pages: window_chunks_of(pages, within_heading_path=True,
                                                                           context=True),
    "raw window_chunks, small budget": lambda pages: _raw(pages, window_chunks, budget=SMALL_BUDGET,
                                                          within_heading_path=True, context=True),
}

EXPECTED = {
    "python": {
        "structured": "72dc5943e6c728a47fb8504ec2690764ba27350725b5dad14b97207128a00e0d",
        "context (lesson 04)": "5d09cc1f1a9fa744de469740506321b6729874763249af70433e7a0d2d8508b8",
        "structured, no context": "c49bb6154a7002907e5cf0fdd53fae896aa353e9c2739827d6e0124d2ec735c8",
        "structured, unsplit": "38e4f5cd2b7871295cf03365a132ff6052a30d02ad558de40a3caae866c47bec",
        "structured, small budget, overlap 1": "3d68dc96a13beeeec3a2f3ecf1392800f901d6e5b9a8dee522aa4232c22cff69",
        "structured, no headings": "fc9026706f9e18d87d4001352c8432fd8dba071c1b7704d431c9fd9def882095",
        "raw chunk_blocks, small budget, margin": "038dd9b1b7f08ab84f95d402d6aaf7442839200f306d3dc7c4bb777a06f0ec25",
        "windows": "92a6d5c908dffcb6a025490c98ac8d35ff3833048a1813492f81321ee9dc3422",
        "windows within heading path, context": "f49f4274e9992ca2d2a0a36a015ab1118746d8827ef53ac3509e09286dc390e5",
        "raw window_chunks, small budget": "44b5260adfee875403c3d5f7c9f4cbadfea3e5e81ac5e4f85618e79eb16631bb",
    },
    "pandas": {
        "structured": "19613d27a0d3c3aecd71d3c91c95f0df27d166f15cdbe491f79a38364d2d8dea",
        "context (lesson 04)": "9143847209cbc2c34a61ee00fe14d14fa5757b4c0fd37868713c0e81a012c0a2",
        "structured, no context": "a0670058fdb392a50da2d62be5c81a969954ffd36da7de1ac2ded7b7347031c3",
        "structured, unsplit": "feff5b653f7acc38c11a8c83761513c41bc3bbf7d81c0382b6229c69f9264c71",
        "structured, small budget, overlap 1": "c3e9288ab1b58337424e6a1bd32a59e3cda1761c88cbbfa3851cfeca4ce3f93d",
        "structured, no headings": "72a72522252cd2c75a66d63b178b64b17b7ad750aaea1fdaf40b34a35c5c7977",
        "raw chunk_blocks, small budget, margin": "fc2a3745c3417eeb1c3e91a776954aca7c2b7f0b07f5ea849ed5c0999954f6e2",
        "windows": "16c0127d1f7aafc1fb741f4aa4a8e5b094d8f4793c1fd31e24e8373bbcc0d50d",
        "windows within heading path, context": "3d21ffcf809edc702f21e3eaab6c9c3b763f81297c255186db44acc69f39ac28",
        "raw window_chunks, small budget": "bfd036af4a62e94bd32b0ac1d7cec66dbafd70711dbd99cbb5e539e1b4e68b1c",
    },
}


@cache
def _pages(corpus: str) -> tuple[Page, ...]:
    return tuple(load_pages(corpus=corpus))


@pytest.mark.model  # counts tokens with the embedder's tokenizer
@pytest.mark.parametrize("corpus", list(EXPECTED))
@pytest.mark.parametrize("builder", list(BUILDERS))
def test_chunkers_give_the_recorded_chunks_on_the_whole_corpus(corpus, builder):
    chunks = BUILDERS[builder](_pages(corpus))
    assert chunks, builder
    text, recorded = canonical(chunks), EXPECTED[corpus][builder]
    if hashlib.sha256(text.encode("utf-8")).hexdigest() == recorded:
        keep_chunks(text, recorded)
    else:
        pytest.fail(golden_message(f"{corpus} / {builder}", text, recorded, len(chunks)), pytrace=False)


def test_a_mismatch_names_the_first_differing_chunk_and_field():
    recorded = [[["doc", "a.html"], ["heading_path", ["A", "B"]], ["text", "one"]],
                [["doc", "a.html"], ["heading_path", ["A", "C"]], ["text", "two"]]]
    moved = [recorded[0], [["doc", "a.html"], ["heading_path", ["A", "C"]], ["text", "two, longer"]]]
    assert first_difference(recorded, moved) == (
        "first differing chunk: #1 (a.html > A > C); text at character 3: recorded 'two' now 'two, longer'")
    assert first_difference(recorded, recorded[:1]) == (
        "the first 1 chunks agree; now ends there, then: " + repr(recorded[1]))
    assert first_difference(recorded, recorded) == "the chunks are the same"
    long = "x" * 100
    assert _changed("text", long + "old tail", long + "new tail") == (
        f"text at character 100: recorded '{'x' * 40}old tail' now '{'x' * 40}new tail'")
    assert _changed("start", 3, 4) == "start: recorded 3 now 4"


@pytest.mark.parametrize("module", [chunking, packing], ids=lambda m: m.__name__)
def test_the_chunkers_read_on_one_screen_with_no_closures(module):
    """chunk_blocks was 137 lines of closures over variables its loop reassigned; now no function
    of the chunkers is over 60 lines and the two chunkers define no function inside themselves."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    lengths = {node.name: node.end_lineno - node.lineno + 1 for node in functions}
    assert max(lengths.values()) <= 60, lengths
    for node in functions:
        if node.name in ("chunk_blocks", "window_chunks"):
            assert not [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node]


if __name__ == "__main__":  # prints the table above, for a deliberate change of the chunkers
    for name in EXPECTED:
        print(f'    "{name}": {{')
        for label, build in BUILDERS.items():
            print(f'        "{label}": "{digest(build(_pages(name)))}",')
        print("    },")
