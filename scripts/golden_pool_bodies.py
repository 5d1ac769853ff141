"""Every system's chunk bodies as an earlier pool named them, for `golden_pool.py repool --earlier-bodies`.

A pool record stores item names (page + hash of the normalised body), not texts. To know which
sentences an earlier reading held, run this file with the code the earlier pool ran, from a git
worktree at that commit (data/corpus linked in; no vectors are computed, only chunk texts):

    git worktree add /tmp/earlier COMMIT && ln -s "$PWD/data/corpus" /tmp/earlier/data/corpus
    cd /tmp/earlier && COURSE_CACHE_DIR=/tmp/earlier-cache PYTHONPATH=/tmp/earlier \
        python /path/to/scripts/golden_pool_bodies.py python /tmp/bodies.json [SYSTEM,SYSTEM...]

The Python set's first pool ran its lesson pipelines at a844da1 and its peers at 2d38b1b.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys

import numpy as np


def no_embed(texts, *args, **kwargs):
    """Zero vectors: only the chunk texts are wanted, and embedding them all would take minutes."""
    return np.zeros((len(list(texts)), 384), dtype=np.float32)


def main(argv: list[str] | None = None) -> int:
    """Write {item name: body} for every chosen system's chunks of the set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=["python", "pandas"])
    parser.add_argument("out", help="the JSON file to write")
    parser.add_argument("systems", nargs="?", help="comma-separated systems (default: every one)")
    args = parser.parse_args(argv)
    models = importlib.import_module("course_lib.infra.models")
    models.embed = no_embed  # before any pipeline is built; the retrievers call it through the module
    from course_lib.core.load import load_pages
    from course_lib.core.pipeline import PIPELINES, build_pipeline
    from course_lib.evaluation.golden import normalize
    try:
        from course_lib.extras.peers import PEERS, build_any
    except ImportError:  # a commit from before the peers could be built by name
        PEERS, build_any = {}, build_pipeline
    name, out = args.set, args.out
    pages = load_pages(corpus=name)
    chosen = args.systems.split(",") if args.systems else [*PIPELINES, *PEERS]
    bodies = {}
    for system in chosen:
        pipeline = build_any(system, pages)
        for chunk in pipeline.chunks:  # named as this commit's golden_pool.item_key names them
            digest = hashlib.sha256(normalize(chunk.body).encode()).hexdigest()[:12]
            bodies[f"{chunk.doc}#{digest}"] = chunk.body
        print(system, len(pipeline.chunks), flush=True)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(bodies, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
