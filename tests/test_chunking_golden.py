"""Golden output of the chunkers on the shipped corpora: a refactor of `chunk_blocks` or
`window_chunks` must give the same chunks, field for field, byte for byte.

Every chunk the pipelines' builders make (and the raw per-page output, before duplicates are
dropped) is written as canonical JSON, every `Chunk` field in order plus the embedded `text`, and
the whole list hashed. The digests were computed from the code before the refactor of issue 26;
a change that is meant to move chunks updates them, and says so in its commit.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
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
from course_lib.records import Chunk, Page

SMALL_BUDGET = 96  # tokens: many blocks split, many chunks per section


def chunk_record(chunk: Chunk) -> list:
    """Every field of a chunk in declaration order, then its embedded text, JSON-ready."""
    return [[f.name, getattr(chunk, f.name)] for f in dataclasses.fields(chunk)] + [["text", chunk.text]]


def digest(chunks: Sequence[Chunk]) -> str:
    """sha256 of the canonical JSON of a chunk list (meta keys in the order the chunker wrote them)."""
    text = json.dumps([chunk_record(c) for c in chunks], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
        "structured": "852e08802454ea18be406661f4da17bc986e58f7fff42c2bbbc4296441f2534c",
        "context (lesson 04)": "5f8c4f5a883127d822683fb4eccd7b3fec8f11cf8e6c7fdb19b93049bf0fcb16",
        "structured, no context": "ffe3d21aea6d2abbeba9667065523e42b63058f3a57fe5e65876776bbe549cad",
        "structured, unsplit": "2d355367250ef8c40b58fc8ff998b013600e957f4726d9a295a44711ecb609ec",
        "structured, small budget, overlap 1": "ef12f9405c592a9f68583db7656d3e39b54a25c528dca8c27c5a06b45edc876b",
        "structured, no headings": "061bb68d52eb6497142719c98d4cab193d822eb2185c362ef72ac8e399394905",
        "raw chunk_blocks, small budget, margin": "91caa2a5a42cbf313d50dce6999fb3f2fe52ac452a577b1524ddf28556be17e9",
        "windows": "ba793a5a1a5f06157274b02890148a945d3cf3c861e8e6e8e21ab78eccdfff1c",
        "windows within heading path, context": "3602c5df28c01952667e2c1027fe6e418df4c7426f817fbcbd97eb872338a2b6",
        "raw window_chunks, small budget": "a58e660e3bfbd6699a5e2ee91b0ac28e4b64ca1e71fc4cd6e4eb43d23d2ff18d",
    },
    "pandas": {
        "structured": "344804b4273c14b13c09db8ebe067270ae8e32513559c58cc27dcb7c47762006",
        "context (lesson 04)": "58927383e11860333f1750f6135548b8e9ea0b61f14494ddb66cb0ed7807a110",
        "structured, no context": "b7dd3c0e17777582a944cdf41db1b24e1fb9cee6fe97ccecfc2295a71d9243d2",
        "structured, unsplit": "80ef990b91333c83692882a44b4c1755d637fdff78da7277d1cef3d5ca9cb60e",
        "structured, small budget, overlap 1": "c6b6e15617df2054c932b93c7d9df020ef7237a9f9213f2f352ec2e3a40a2a21",
        "structured, no headings": "1c619eca55288c5876cce3010be0681894da865808b0fa3944ba4d725bd7e833",
        "raw chunk_blocks, small budget, margin": "30c40ebfb04db5c69e3be674efa1714f0a16eab0dc22666e75df2e2fb47b8d00",
        "windows": "958d25b2cb4ce49a1345351ea71a312f0df64f684e421ce194861de5405e07f8",
        "windows within heading path, context": "79c389425e28e8647b5cdb50a3ff07986be1cd6c65b3162c715fdefdafa18e7f",
        "raw window_chunks, small budget": "e96d2e0f71954d50470656e6f50dfccf515bd9066d950bc74d7b4dc15d3d92b9",
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
    assert digest(chunks) == EXPECTED[corpus][builder], f"{corpus} / {builder}: {len(chunks)} chunks"


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
