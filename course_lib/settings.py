"""Every default the pipeline uses, in one place, with the lesson that chose it.

Stages read their defaults from here, so "the final pipeline" means the same thing in the
lessons, the command line, the benchmarks and the tests. A lesson that measures another value
passes one keyword (`top_n=10`); it never edits this file.
"""
from __future__ import annotations

# --- parsing and cleaning (lesson 03) ---------------------------------------------------------
MIN_CHARS = 200  # a page with less text than this outside its headings is a stub (second source)
MAX_SHARE = 0.5  # frequency boilerplate: a block on more than half the pages; lesson 03 shows
#                  that 0.05 (the production write-up's "a few percent") deletes real labels here
MIN_PAGES = 3  # ... and on at least this many pages, so a two-page site keeps its text
PARSER_FAILURE_LIMIT = 0.10  # a run where parser exceptions hit more pages than this is an error
PARSER_FAILURE_MIN = 3  # ... and at least this many pages

# --- chunking (lessons 01, 04, 05) ------------------------------------------------------------
NAIVE_SIZE = 1000  # lesson 01: fixed chunks of 1,000 characters ...
NAIVE_OVERLAP = 200  # ... repeating the last 200
OVERLAP_BLOCKS = 0  # lesson 04's sweep: one block of overlap did not beat none
PREFER_BLANK = 0.6  # lesson 05: cut long code at a blank line once a piece is 60% of the budget

# --- retrieval (lessons 06, 07) ---------------------------------------------------------------
RRF_K = 60  # lesson 06: the original paper's k, kept fixed: choosing k on dev would tune on the
#              questions we report (lesson 06 shows the sweep and its spread)
CANDIDATES = 50  # lesson 06: each retriever's list length before fusion
TOP_N = 30  # lesson 07: the fused shortlist the re-ranker re-orders
BATCH_SIZE = 32  # lesson 07: pairs per forward pass of the re-ranker

# --- evaluation (lesson 02) -------------------------------------------------------------------
DEPTH = 20  # rankings are judged to this depth: recall@20 and MRR@20
CONTEXT_BUDGET = 1000  # tokens of ranked context for the budget metrics (lesson 02)
CONFIDENCE = 0.95
N_RESAMPLES = 10_000  # bootstrap and permutation resamples for continuous metrics (MRR)
RESAMPLE_BLOCK = 2_000_000  # values held at once while resampling: memory stays flat as a golden file grows
EQUIVALENCE_MARGIN = 0.05  # lesson 02: "no difference" means shown within +-0.05 by two one-sided tests
POWER = 0.8  # lesson 02: the power at which a split's minimum detectable difference is computed
SEED = 0

# --- serving (lesson 08) ----------------------------------------------------------------------
PROMPT_CHUNKS = 4  # the production write-up went from eight chunks to four
RESULT_TTL = 300.0  # seconds a cached result stays valid
RESULT_CACHE_SIZE = 1024
QUERY_CACHE_SIZE = 4096

# --- the pipelines ----------------------------------------------------------------------------
FINAL_PIPELINE = "reranked"  # what `ask`, `compare`, the benchmarks and lesson 09 call final
