"""Pre-compute every cache the lessons read, so a classroom starts warm: `make warm`.

    COURSE_CACHE_DIR=/srv/course-cache python scripts/warm_cache.py [--default-only]

Embeds every chunking the lessons build (lessons 01-09, lesson 09's ablations included) and
computes the MaxSim token vectors every re-ranking lesson reads: those of the default chunking
(lessons 07-08, with lesson 07's int8 index of them), of lesson 09's re-ranked ablation (fixed
windows within each heading path) and of every golden question, so every lesson re-ranks from
disk, into
COURSE_CACHE_DIR (default: .cache/). `--default-only` computes token vectors for the default
chunking alone (a smaller, faster warm-up; lesson 09 then computes its ablations' vectors
itself). Prints what it computed, how long it took and the size of each store.

Copy the folder to learners' machines (or share it) and point COURSE_CACHE_DIR at it; see
docs/TEACHING.md. The caches are keyed by a hash of the model's files, so a learner with a
different model simply computes their own vectors; nothing stale is ever served. The stores
are closed at the end, so the folder is complete on disk and can be shared read-only.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from course_lib.core import rerank
from course_lib.core.chunking import without_context
from course_lib.core.load import load_pages
from course_lib.core.naive import naive_chunks
from course_lib.core.pipeline import clean_fixed_chunks, context_chunks, structured_chunks, window_chunks_of
from course_lib.evaluation.golden import load_golden
from course_lib.infra import models
from course_lib.infra import vector_cache as vectorstore
from course_lib.infra.lesson_records import record
from course_lib.infra.paths import GOLDEN_FILE, cache_dir
from course_lib.records import Chunk, Page

DEFAULT = "limited (05-08, default)"
# Both golden sets: the Python one (lessons 02-11) and lesson 10's pandas one.
GOLDEN_FILES = (GOLDEN_FILE, GOLDEN_FILE.parent / "pandas.jsonl")
ABLATION = "09: - structure-aware boundaries"
# Every chunking a lesson embeds, by the name a teacher will recognise. Lessons 07-09 re-rank two of
# them (the default, and lesson 09's fixed windows within each heading path), so only those two need
# token vectors.
CHUNKINGS: dict[str, Callable[[Sequence[Page]], list[Chunk]]] = {
    "naive (01)": naive_chunks,
    "clean (03)": clean_fixed_chunks,
    "fixed windows (04)": window_chunks_of,
    "structured (04)": lambda pages: without_context(context_chunks(pages)),
    "context (04)": context_chunks,
    DEFAULT: structured_chunks,
    ABLATION: lambda pages: window_chunks_of(pages, within_heading_path=True,
                                                                       context=True),
    "09: - context line": lambda pages: structured_chunks(pages, context=False),
    "09: - cleaning": lambda pages: structured_chunks(pages, main_selector=None, drop_boilerplate=False,
                                                      max_share=1.0),
}


def folder_size(folder: Path) -> int:
    """Bytes of every file under a folder."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def warm_token_vectors(reranker: rerank.MaxSimReranker, chunks: Sequence[Chunk], *, batch: int = 256) -> None:
    """Token vectors of every chunk, computed in batches (a fresh batch only for what is missing)."""
    texts = [c.text for c in chunks]
    for start in range(0, len(texts), batch):
        reranker.token_vectors(texts[start:start + batch])
        print(f"    token vectors {min(start + batch, len(texts)):,}/{len(texts):,}", end="\r", flush=True)
    print()


def warm_questions(reranker: rerank.MaxSimReranker) -> int:
    """Every golden question's embedding and token vectors (each encoded alone, as a lesson's
    re-ranker encodes it), so no lesson encodes a question twice; returns how many questions."""
    questions = sorted({q.question for path in GOLDEN_FILES for q in load_golden(path)})
    models.embed(questions, progress=False)
    for question in questions:
        reranker.query_vectors(question)
    return len(questions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--default-only", action="store_true",
                        help="token vectors of the default chunking only, not of lesson 09's ablations")
    args = parser.parse_args(argv)
    root = cache_dir()
    print(f"warming {root} (COURSE_CACHE_DIR={os.environ.get('COURSE_CACHE_DIR', '(unset)')})")
    pages = load_pages()
    reranker = rerank.MaxSimReranker(cache_size=256)  # the disk store is the point, not memory
    total, size_before = time.perf_counter(), folder_size(root)
    for name, build in CHUNKINGS.items():
        start = time.perf_counter()
        chunks = build(pages)
        models.embed([c.text for c in chunks], progress=False)
        if name == DEFAULT or (name == ABLATION and not args.default_only):
            warm_token_vectors(reranker, chunks)
        print(f"  {name:<44}{len(chunks):>6,} chunks {time.perf_counter() - start:>7.1f} s", flush=True)
        if name == DEFAULT:
            print(f"    {rerank.token_store_size(chunks, reranker=reranker)}")
            index = rerank.int8_token_index(chunks, reranker=reranker)  # lesson 07 judges it
            print(f"    int8 token index: {index.size_bytes() / 1e6:,.1f} MB")
    start = time.perf_counter()
    asked = warm_questions(reranker)
    seconds_asked = time.perf_counter() - start
    print(f"  {'golden questions (02-11)':<44}{asked:>6,} asked {seconds_asked:>8.1f} s", flush=True)
    vectorstore.close_all()  # SQLite's log folded into the database: the folder is complete on disk
    seconds = time.perf_counter() - total
    print(f"done in {seconds:.0f} s")
    # docs/TEACHING.md renders the warm-up's time and size from this record (`make readme`).
    record("warm_cache", runtime_s=round(seconds, 1), cache_mb=round(folder_size(root) / 1e6, 1),
           computed_mb=round((folder_size(root) - size_before) / 1e6, 1), default_only=args.default_only)
    for kind in ("embeddings", "token_vectors", "token_index", rerank.QUESTION_STORE):
        print(f"  {kind:<24}{folder_size(root / kind) / 1e6:>10,.1f} MB")
    print(f"  {'total':<24}{folder_size(root) / 1e6:>10,.1f} MB in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
