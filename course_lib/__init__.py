"""course_lib: the small shared library of the course "RAG on messy HTML".

Read it in lesson order:

    core/         what lessons 01-08 teach, one module per stage, in pipeline order:
                  naive, load, parse, walker, html_parts, boilerplate, chunking, tokens,
                  splitting, lexical, retrieve, rerank, pipeline, serve
    evaluation/   the golden set, the judge, metrics, comparisons, statistics, verdicts, display
    extras/       one-lesson modules a first read may skip: survey, diversity, chunk viewer,
                  golden draft, peer libraries, PostgreSQL + pgvector
    infra/        what no lesson opens: model loading, caches, errors, paths
    app/          the application on top of all four: the command line and the self-check

Lessons import each name from its home module (`from course_lib.core.chunking import
chunk_blocks`), so a learner knows which file to open. For a REPL or a script, the names a lesson
uses most are also reachable here, imported on first use (PEP 562), so `import course_lib` stays
light: it loads neither torch nor a model.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> home module: the one place each name is defined.
LESSON_NAMES = {
    "load_pages": "course_lib.core.load",
    "load_corpus": "course_lib.core.load",
    "strip_tags": "course_lib.core.naive",
    "naive_chunks": "course_lib.core.naive",
    "parse_blocks": "course_lib.core.parse",
    "chunk_blocks": "course_lib.core.chunking",
    "DenseRetriever": "course_lib.core.retrieve",
    "BM25Retriever": "course_lib.core.lexical",
    "rrf": "course_lib.core.retrieve",
    "Pipeline": "course_lib.core.pipeline",
    "PIPELINES": "course_lib.core.pipeline",
    "build_pipeline": "course_lib.core.pipeline",
    "structured_chunks": "course_lib.core.pipeline",
    "SearchService": "course_lib.core.serve",
    "load_golden": "course_lib.evaluation.golden",
    "validate_golden": "course_lib.evaluation.golden_checks",
    "is_relevant": "course_lib.evaluation.judging",
    "evaluate_retriever": "course_lib.evaluation.metrics",
    "evaluate_rankings": "course_lib.evaluation.metrics",
    "summary": "course_lib.evaluation.metrics",
    "paired_comparison": "course_lib.evaluation.compare",
    "holm_adjust": "course_lib.evaluation.compare",
    "verdict": "course_lib.evaluation.verdicts",
    "verdict_table": "course_lib.evaluation.verdicts",
    "metrics_table": "course_lib.evaluation.display",
}
__all__ = sorted(LESSON_NAMES)


def __getattr__(name: str):
    """Import a lesson-facing name from its home module on first use (PEP 562)."""
    if name not in LESSON_NAMES:
        raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
    value = getattr(importlib.import_module(LESSON_NAMES[name]), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *LESSON_NAMES])
