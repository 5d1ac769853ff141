"""Golden output of the chunkers on the shipped corpora: a refactor of `chunk_blocks` or
`window_chunks` must give the same chunks, field for field, byte for byte.

Every chunk the pipelines' builders make (and the raw per-page output, before duplicates are
dropped) is written as canonical JSON, every `Chunk` field in order plus the embedded `text`, and
the whole list hashed. The digests were computed from the code before the refactor of issue 26 and written again
when issue 35's parse stage for any site moved blocks on purpose; a change that is meant to move
chunks updates them, and says so in its commit.
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
        "structured": "ff39a88266940a02c97b9bb3f0423063834a8ee17cb1d67432fdcd2203dc8c97",
        "context (lesson 04)": "9a7f8fec78a883cdf3edf1d94d3092f61668c4eaa352ecc40161ad7ec7690c8c",
        "structured, no context": "a51c03e4a2296cac104bb82e41942af549ae642ded55f7c56074a99f33bf2931",
        "structured, unsplit": "bb3761d6c5fb40278646c67106ec1b1f7927feb070e6503f52697ea1ceec93cb",
        "structured, small budget, overlap 1": "628e3d2199144ab9b841d4b8df9e468b6529e8b5ec8a5f1ca2a069e3b25d1cdc",
        "structured, no headings": "922877820ce78d76ace6490952513a1cc6beee6068d62b5879d9dc0c86cf9207",
        "raw chunk_blocks, small budget, margin": "84861ba69beb46b20e13f03116f2715372c5d64f9388155ba61bf5719df7d63a",
        "windows": "82113f3fba6ed74d1aa6894ffa8ab8338c0c62759e7a1ac96592abed55bec6b0",
        "windows within heading path, context": "cf8267840926ca716a0e1c8129d10b5234c2d9e14c362146a0072fcbf890cc1a",
        "raw window_chunks, small budget": "8b962c9e4da06e05f50b41f6ec0846e121042875f470ae0ad49c2bf46b6a0103",
    },
    "pandas": {
        "structured": "6efc3bce5742f3537d69998ae4054f328485f1452853efc1ad5e546f575d2df2",
        "context (lesson 04)": "500e7d784af84fadc24392b2ea71fd0c992db06da919655b686e68bbec1e380d",
        "structured, no context": "3a81d54a8751f899468ff2ca6dc3135677b23d0277e86cab9a7b2ed1492c6151",
        "structured, unsplit": "1932f1531fafc45dc1a88aada884206894bb927631704caf51f5ac29cf1ea6c1",
        "structured, small budget, overlap 1": "715ed8e89ccd760ca0ca766236c2718cdd35af06b908656c28b330d459c920d3",
        "structured, no headings": "829e51b42a20c2a13268b34f39c3f73c414160d86e834b633eb0e5a1dab5fbdb",
        "raw chunk_blocks, small budget, margin": "8fb78f30408b805740256e6349b119c958df4c421c12e44ad279866e082b2dd8",
        "windows": "5c67b41dfdc2d5ffdac2e53c9544fd0dcb81093c044c67ef3d59358065ad6b71",
        "windows within heading path, context": "9a0cd0fab5e3b6028ae5f9932de0a693b12ba46c32347c92d124d2f43260784a",
        "raw window_chunks, small budget": "0d8ada4313d099641d9e1e6d6259eb307b53cb65b175ed1612ef7fa84b951a3f",
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
