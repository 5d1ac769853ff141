"""Properties of chunk_blocks on random pages: within budget, nothing lost, nothing duplicated
beyond the declared overlap, and never two heading paths (or sections) in one chunk."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_lib.core.chunking import chunk_blocks, context_line
from course_lib.core.splitting import split_block
from course_lib.core.tokens import WordCounter, get_counter
from course_lib.records import Block, Chunk

TITLE = "Page"
PATHS = [((), None), (("Page",), "top"), (("Page", "A"), "a"), (("Page", "A"), "a2"), (("Page", "A", "B"), "b"), (("Other",), "o")]
WORDS = ["alpha", "beta", "Gamma", "e.g.", "i.e.", "os.path", "3.11.", "x", "Done.", "why?", "(note)", "a:", "|", "supercalifragilistic"]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
prose = st.lists(words, min_size=1, max_size=5).map(lambda s: ". ".join(s))
code = st.lists(st.one_of(st.just(""), words), min_size=1, max_size=25).map(lambda ls: "```py\n" + "\n".join(ls) + "\n```")
table = st.tuples(words, st.lists(words, min_size=1, max_size=12)).map(lambda t: "\n".join([t[0], *t[1]]))


@st.composite
def blocks(draw, text_of=None) -> list[Block]:
    """A page: a few runs of blocks, each run under one heading path, often opened by a heading."""
    out = []
    for _ in range(draw(st.integers(1, 5))):
        path, section = draw(st.sampled_from(PATHS))
        if draw(st.booleans()):
            out.append(Block("heading", draw(words), path, section))
        for _ in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(["text", "list_item", "definition", "code", "table", "heading"]))
            if kind == "code":
                body = draw(code)
            elif kind == "table":
                body = draw(table)
            elif kind == "heading":
                body = draw(words)
            else:
                body = draw(text_of if text_of is not None else st.one_of(words, prose))
            out.append(Block(kind, body, path, section))
    return out


def squash(text: str) -> str:
    return "".join(text.split())


def content_of(split_pieces: tuple[str, ...], block: Block) -> bool:
    """Do the pieces hold exactly the block's non-blank characters, fences and captions aside?"""
    whole = squash("".join(split_pieces))
    if whole == squash(block.text):
        return True
    if block.kind == "code":  # every piece re-fenced: drop the fence lines
        inner = ["\n".join(p.split("\n")[1:-1]) for p in split_pieces]
        return squash("".join(inner)) == squash("\n".join(block.text.strip("\n").split("\n")[1:-1]))
    if block.kind == "table":  # every piece repeats the caption line
        caption, *rows = block.text.split("\n")
        rest = [p.split("\n", 1)[1] if "\n" in p else "" for p in split_pieces]
        return squash(caption + "".join(rest)) == squash(block.text)
    return False


def check(page: list[Block], chunks: list[Chunk], *, counter, budget: int, overlap: int, split_long: bool = True,
          headings: bool = True):
    # 1. within budget, and the recorded count is the real count of the embedded text
    for c in chunks:
        assert c.meta["tokens"] == counter.count(c.text)
        assert c.meta["tokens"] <= budget or (not split_long and len(c.meta["parts"]) == 1)
    # 2. never two heading paths or sections in a chunk, and never across a heading
    # (kept headings open the chunk of what they name, so they may carry another path)
    heading_at = [i for i, b in enumerate(page) if b.kind == "heading"]
    for c in chunks:
        content = [i for i in c.meta["block_indices"] if page[i].kind != "heading"]
        if not content:
            assert headings, "a chunk of headings alone exists only when headings are kept"
            continue
        assert {(page[i].heading_path, page[i].section_id) for i in content} == {(c.heading_path, c.section_id)}
        assert c.context == context_line(c.heading_path, TITLE)
        assert not [h for h in heading_at if min(content) < h < max(content)]
    # 3. each part appears once as new content, plus at most `overlap` repeats at a chunk's start
    fresh = [part for c in chunks for part in c.meta["parts"][c.meta["overlap"] :]]
    assert len(fresh) == len(set(fresh))
    assert all(c.meta["overlap"] <= overlap for c in chunks)
    for c in chunks[1:]:
        assert all(part in chunks[chunks.index(c) - 1].meta["parts"] for part in c.meta["parts"][: c.meta["overlap"]])
    # 4. nothing lost: every non-empty block is there, whole or as all of its pieces (a heading
    #    only when kept: it is in the context line otherwise)
    placed = {part: c for c in chunks for part in c.meta["parts"]}
    bodies = "\n".join(c.body for c in chunks)
    for i, block in enumerate(page):
        if block.kind == "heading" and headings and block.text.strip():
            assert all(word in bodies for word in block.text.split())
        if block.kind == "heading" or not block.text.strip():
            continue
        cleaned = block.text.strip("\n") if block.kind == "code" else block.text.strip()
        pieces = (cleaned,)
        if split_long:
            ctx = context_line(block.heading_path, TITLE)
            pieces = split_block(cleaned, kind=block.kind, budget=budget, counter=counter, context=ctx).pieces
            assert content_of(pieces, block)
        for n, piece in enumerate(pieces):
            assert piece in placed[(i, n, len(pieces))].body
    assert [c.id for c in chunks] == [f"d#{n}" for n in range(len(chunks))]


@pytest.mark.parametrize("headings", [True, False])
@SETTINGS
@given(page=blocks(), budget=st.integers(12, 120), overlap=st.integers(0, 2))
def test_properties_with_word_counts(headings, page, budget, overlap):
    counter = WordCounter(limit=budget)
    chunks = chunk_blocks(page, doc="d", title=TITLE, budget=budget, overlap_blocks=overlap, counter=counter,
                          headings=headings)
    check(page, chunks, counter=counter, budget=budget, overlap=overlap, headings=headings)


short = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
# Long runs of short blocks in few sections: the pages where overlap actually happens.
runs = st.lists(
    st.tuples(st.sampled_from(PATHS[1:]), st.lists(short, min_size=2, max_size=15)), min_size=1, max_size=3
).map(lambda rs: [Block("list_item", t, path, sec) for (path, sec), texts in rs for t in texts])


@SETTINGS
@given(page=runs, budget=st.integers(12, 40), overlap=st.integers(1, 3))
def test_properties_of_overlap(page, budget, overlap):
    counter = WordCounter(limit=budget)
    chunks = chunk_blocks(page, doc="d", title=TITLE, budget=budget, overlap_blocks=overlap, counter=counter)
    check(page, chunks, counter=counter, budget=budget, overlap=overlap)


@pytest.mark.parametrize("headings", [True, False])
@SETTINGS
@given(page=blocks(), budget=st.integers(12, 40))
def test_properties_without_splitting(headings, page, budget):
    counter = WordCounter(limit=budget)
    chunks = chunk_blocks(page, doc="d", title=TITLE, budget=budget, split_long=False, counter=counter,
                          headings=headings)
    check(page, chunks, counter=counter, budget=budget, overlap=0, split_long=False, headings=headings)


long_words = st.lists(st.sampled_from(WORDS + ["q" * 120, "Tokenization"]), min_size=1, max_size=60).map(" ".join)


@pytest.mark.model
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=blocks(text_of=long_words), budget=st.integers(24, 80), overlap=st.integers(0, 1))
def test_properties_with_the_real_tokenizer(page, budget, overlap):
    counter = get_counter()
    chunks = chunk_blocks(page, doc="d", title=TITLE, budget=budget, overlap_blocks=overlap, counter=counter)
    check(page, chunks, counter=counter, budget=budget, overlap=overlap)
    bare = chunk_blocks(page, doc="d", title=TITLE, budget=budget, overlap_blocks=overlap, counter=counter,
                        headings=False)
    check(page, bare, counter=counter, budget=budget, overlap=overlap, headings=False)
