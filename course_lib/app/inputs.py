"""What a command reads and checks before anything is built: the pipeline's name, the question,
the corpus (with its skipped and repaired pages said), the --doc/--kinds filter, the site a
prompt links to; and the one way a command builds an index (with progress and time estimates).

Each function takes the values it reads, by name (`read_corpus(args.corpus, include=...)`), never
the parsed command line: what it depends on is in its signature, and a test or a script calls it
without building an argparse namespace.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from course_lib.infra.errors import CorpusError, UsageError
from course_lib.infra.models import estimating
from course_lib.infra.terminal import progress, say

_CANONICAL = re.compile(r"""<(?:link[^>]*rel=["']?canonical["']?[^>]*href|base[^>]*href)=["']?(https?://[^"'\s>]+)""",
                        re.I)
_HAS_WORD = re.compile(r"\w")


def pipeline_name(name: str) -> str:
    """The name, if the course's pipelines or lesson 10's peers know it; else a usage error.

    A course pipeline is looked up in the core registry alone: the peers' libraries (extras/) are
    imported only for a `peer:` name, or to list them when a name is unknown.
    """
    from course_lib.core.pipeline import PEER_PREFIX, PIPELINES

    if name in PIPELINES:
        return name
    from course_lib.extras.peers import PEERS

    if not name.startswith(PEER_PREFIX) or name not in PEERS:
        raise UsageError(f"unknown pipeline {name!r}", hint=f"use one of {', '.join([*PIPELINES, *PEERS])}")
    return name


def describe_pipeline(name: str) -> str:
    """One line saying what a course pipeline or a peer is, for the command line's output."""
    from course_lib.core.pipeline import PEER_PREFIX, PIPELINES

    if not name.startswith(PEER_PREFIX):
        return PIPELINES[name][1]
    from course_lib.extras.peers import peer

    found = peer(name)
    return f"{found.name}: lesson 10's peer, chunked by {found.library}, searched by dense vectors"


def question(text: str) -> str:
    """The question stripped; one without a word would rank noise, so it is refused."""
    if not _HAS_WORD.search(text):
        raise UsageError("the question is empty or has no words", hint="ask a question in words")
    return text.strip()


def positive(value: str) -> int:
    """argparse type for --k and --n: a whole number of at least 1."""
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {k}")
    return k


def pages(n: int) -> str:
    return f"{n} page" if n == 1 else f"{n} pages"


def read_corpus(corpus: Path | str | None, *, include: Sequence[str] | None = None, parse: bool = True):
    """The corpus for a command (`--corpus`, None: the shipped one; `--include` patterns), with its
    skipped, repaired and ignored files printed, and the parser's skips too; a corpus with no usable
    page is refused before any index is built."""
    from course_lib.core.load import describe_skips, load_corpus

    with progress("reading the pages"):
        loaded = load_corpus(corpus, include=include or ())
    for line in loaded.notes():
        say(line)
    if parse:
        from course_lib.core.pipeline import clean_corpus

        size = sum(len(page.html) for page in loaded.pages) / 1e6
        with progress(f"parsing {pages(len(loaded.pages))} ({size:.1f} MB)"):
            blocks, skipped, _ = clean_corpus(loaded.pages)
        for path, reason in skipped:
            say(f"skipped {path}: {reason}")
        if not blocks:
            every = [*loaded.skipped, *skipped]
            raise CorpusError(f"no usable page: all {len(every)} were skipped: {describe_skips(every)}",
                              path=loaded.folder, hint="the lines above say why; add pages with real text")
    return loaded


def build_retriever(name: str, loaded, *, model: str | None, query_encoder: str = "torch"):
    """A pipeline over the loaded pages, saying on stderr what it is doing if that takes long, and
    how long an embedding of many new texts will take before it starts. `query_encoder` is what
    embeds the question (`--query-encoder`); the chunk vectors are the same whichever it is."""
    from course_lib.core.pipeline import PEER_PREFIX, build_pipeline

    with progress(f"building the {name!r} index over {pages(len(loaded.pages))}"), estimating():
        if name.startswith(PEER_PREFIX):  # only a peer's name imports the peers' libraries
            from course_lib.extras.peers import build_peer

            return build_peer(name, loaded.pages, model=model, query_encoder=query_encoder)
        return build_pipeline(name, loaded.pages, model=model, query_encoder=query_encoder)


def base_url(loaded, *, given: str | None = None) -> str | dict[str, str]:
    """`given` (--base-url), else the corpus's own (a shipped corpus), else each page's own site (its
    canonical link / <base>, minus the page's path) as {page: site}: one page's <base> never
    decides where the others are cited. A page without one cites its path, never a made-up site."""
    if given:
        return given if given.endswith("/") else given + "/"
    if loaded.base_url:
        return loaded.base_url
    sites = {}
    for page in loaded.pages:
        match = _CANONICAL.search(page.html[:20_000])
        if match and match.group(1).endswith(page.path):
            sites[page.path] = match.group(1)[: len(match.group(1)) - len(page.path)]
    return sites


def where(chunks, *, doc: str | None = None, kinds: str | None = None):
    """The --doc/--kinds filter (`kinds` comma-separated, as typed), refusing a value that matches
    nothing in this index."""
    from course_lib.core.retrieve import make_filter

    kind_list = [k.strip() for k in kinds.split(",") if k.strip()] if kinds else None
    if doc:
        docs = sorted({c.doc for c in chunks})
        if doc not in docs:
            raise UsageError(f"--doc {doc!r} matches no page", hint=f"try one of {', '.join(docs[:5])}")
    if kind_list:
        known = sorted({k for c in chunks for k in c.kinds})
        unknown = [k for k in kind_list if k not in known]
        if unknown:
            raise UsageError(f"--kinds {unknown[0]!r} matches no chunk",
                             hint=f"use some of {', '.join(known)}")
    return make_filter(doc=doc, kinds=kind_list) if (doc or kind_list) else None
