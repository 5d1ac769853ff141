"""An LLM's answer, checked: its [n] citations against the numbered sources of its prompt.

Lesson 08 builds a prompt from the top chunks (`serve.build_prompt`); with an API key, `serve.ask_llm`
sends it. What comes back is checked by rule, not by another model: every [n] must name a source the
prompt holds, and text the answer quotes must occur in a source it cites. Offline (no key, no client
package, or COURSE_OFFLINE_LLM=1) the answer says which, and the course stops at the prompt.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from course_lib import settings
from course_lib.core.serve import DOCS_URL, ask_llm, build_prompt, llm_missing
from course_lib.records import Chunk, Hit

_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
# Text the answer puts in backticks or quotation marks: it claims to be the sources' own words.
_QUOTED = re.compile(r"`([^`\n]{3,})`|\u201c([^\u201d\n]{3,})\u201d|\"([^\"\n]{3,})\"")
_DECLINES = re.compile(r"\b(?:do(?:es)?n[\u2019']?t|do(?:es)? not|cannot|can[\u2019']?t)\s+"
                       r"(?:contain|say|answer|mention|find)", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class CitationCheck:
    """What an answer cites, checked against the numbered sources of its prompt, by rule alone.

    `cited`: the source numbers it cites; `unknown`: numbers no source has (a citation that points
    nowhere); `unsupported`: quoted text (backticks or quotation marks) in a citing sentence that
    none of that sentence's cited sources holds; `declines`: it says the sources do not answer.
    """

    cited: tuple[int, ...]
    unknown: tuple[int, ...]
    unsupported: tuple[str, ...]
    declines: bool

    @property
    def ok(self) -> bool:
        """Cites only sources that exist, quotes only what they hold, and cites something unless
        it declines to answer."""
        return not self.unknown and not self.unsupported and (bool(self.cited) or self.declines)

    def __str__(self) -> str:
        parts = [f"cites {', '.join(f'[{n}]' for n in self.cited) or 'no source'}"]
        if self.unknown:
            parts.append(f"no such source: {', '.join(f'[{n}]' for n in self.unknown)}")
        if self.unsupported:
            parts.append("quoted but in no cited source: " + "; ".join(repr(q) for q in self.unsupported))
        if self.declines:
            parts.append("says the sources do not answer")
        return ("citations OK: " if self.ok else "citations NOT OK: ") + "; ".join(parts)


def check_citations(answer: str, sources: Sequence[Chunk]) -> CitationCheck:
    """Check an answer's [n] citations against `sources`, the chunks numbered 1.. in its prompt.

    Deterministic: numbers are read with a pattern, and a quoted phrase must occur, folded
    (NFKC, case, whitespace), in one of the sources its sentence cites. A model can cite [2] for a
    claim source 2 does not make; this check catches the mechanical failures (a citation to no
    source, a "quotation" found nowhere), not every wrong claim.
    """
    cited: set[int] = set()
    unsupported: list[str] = []
    for sentence in _SENTENCE_END.split(answer):
        numbers = {int(n) for group in _CITATION.findall(sentence) for n in re.split(r"[,;]", group)}
        cited |= numbers
        bodies = [_folded(sources[n - 1].text) for n in numbers if 1 <= n <= len(sources)]
        for match in _QUOTED.finditer(sentence if numbers else ""):
            quote = next(g for g in match.groups() if g)
            if not any(_folded(quote) in body for body in bodies):
                unsupported.append(quote)
    unknown = tuple(sorted(n for n in cited if not 1 <= n <= len(sources)))
    return CitationCheck(tuple(sorted(cited)), unknown, tuple(unsupported), bool(_DECLINES.search(answer)))


@dataclass(frozen=True)
class SourcedAnswer:
    """A question's prompt, the model's answer (None when no call was made, and `missing` says why)
    and the check of its citations against the prompt's sources."""

    prompt: str
    text: str | None
    check: CitationCheck | None
    missing: str | None

    def __str__(self) -> str:
        if self.text is None:
            return f"No LLM call: {self.missing}. The course stops at the prompt above."
        return f"{self.text}\n\n[{self.check}]"


def answer_with_sources(question: str, hits: Sequence[Hit], chunks: Sequence[Chunk], *,
                        max_chunks: int = settings.PROMPT_CHUNKS, base_url: str | None = DOCS_URL,
                        client=None) -> SourcedAnswer:
    """Build the prompt from the top `max_chunks` hits, ask the LLM (`ask_llm`), and check the
    answer's citations against exactly the sources the prompt numbered."""
    prompt = build_prompt(question, hits, chunks, max_chunks=max_chunks, base_url=base_url)
    missing = None if client is not None else llm_missing()
    text = ask_llm(prompt, client=client) if missing is None else None
    sources = [chunks[hit.index] for hit in hits[:max_chunks]]
    return SourcedAnswer(prompt, text, check_citations(text, sources) if text is not None else None, missing)
