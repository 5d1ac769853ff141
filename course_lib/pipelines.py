"""The pipelines the lessons build, registered by name so any of them runs on any corpus.

`build_pipeline("naive", pages)` returns a retriever; `python -m course_lib evaluate --pipeline
naive` scores it on a golden file. Each lesson that adds a technique registers its pipeline
here, so a practitioner can run the whole comparison on their own site.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .naive import naive_chunks
from .records import Page
from .search import DenseRetriever, Retriever

Builder = Callable[..., Retriever]
PIPELINES: dict[str, tuple[Builder, str]] = {}


def register(name: str, description: str) -> Callable[[Builder], Builder]:
    """Decorator adding a pipeline builder `(pages, *, model) -> Retriever` under `name`."""

    def add(builder: Builder) -> Builder:
        PIPELINES[name] = (builder, description)
        return builder

    return add


def build_pipeline(name: str, pages: Sequence[Page], *, model: str | None = None) -> Retriever:
    """Build a registered pipeline over pages; an unknown name lists the known ones."""
    if name not in PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(PIPELINES)}")
    builder, _ = PIPELINES[name]
    return builder(pages, model=model)


@register("naive", "lesson 01: regex-stripped text, fixed 1,000-character chunks, dense search")
def naive_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Retriever:
    return DenseRetriever(naive_chunks(pages), model=model)
