"""Every default the course uses, in one place, under a name that says what it is for, with the
lesson that chose it.

Stages read their defaults from here, so "the final pipeline" means the same thing in the
lessons, the command line, the benchmarks and the tests. A lesson that measures another value
passes one keyword (`top_n=10`); it never edits this file. A test (tests/test_settings.py) fails
when a public function's numeric default is typed anywhere else.
"""
from __future__ import annotations

# --- parsing and cleaning (lesson 03) ---------------------------------------------------------
STUB_MIN_CHARS = 200  # a page with less text than this outside its headings is a stub (chunking lesson)
BOILERPLATE_MAX_PAGE_SHARE = 0.5  # frequency boilerplate: a block on more than half the pages;
#                                   lesson 03 shows that 0.05 (the production write-up's "a few
#                                   percent") deletes real labels here
BOILERPLATE_MIN_PAGES = 3  # ... and on at least this many pages. Two would catch more of the share bars
#                            of two-page web sites (bench_extraction.py --min-pages 2), but a page saved
#                            twice in a small folder would then lose every block (tests/test_bad_input.py)
MAIN_LANDMARK_SHARE = 0.5  # lesson 03: a landmark (<main>, <article>...) is the main text when it holds
#                            half of the page's reading text (text outside links) ...
MAIN_CONTAINER_SHARE = 0.6  # ... else the smallest container holding this share and two paragraphs
MAIN_NARROW_SHARE = 0.75  # lesson 03: inside a landmark, the smallest container (not a <section>) holding
#                          this share of its text, two paragraphs and all its code is the post's body
#                          (bench_extraction.py, even half: 0.7-0.9 all cut the leak; 0.75 had the best F1)
RULE_MAX_PAGE_SHARE = 0.9  # lesson 03: a furniture rule that would remove more of a page's text than
#                            this is not applied to that page (a <form> or <header> around it all)
LINK_DENSE_SHARE = 0.6  # lesson 03: a list or block whose text is mostly links ...
LINK_DENSE_MAX_CHARS = 30  # ... of at most this many characters each on average is a menu
LONE_LINK_MAX_CHARS = 30  # lesson 03: a block that is one link this short is a button ("Back to blog")
CALL_TO_ACTION_MAX_CHARS = 250  # lesson 03: a box this short around a form or button is a call to action
PROSE_MAX_LINK_SHARE = 0.5  # lesson 03: text is prose (it ends a furniture section) below this link share
CONTROL_LABELS_MAX_CHARS = 60  # lesson 03: an element this short whose strings are all control labels
DISCLOSURE_MAX_CHARS = 400  # lesson 03: a box this short that discloses affiliate links is furniture,
DISCLOSURE_MIN_SHARE = 0.5  # ... when the sentences that disclose are at least this share of its text
PARSER_FAILURE_MAX_SHARE = 0.10  # a run where parser exceptions hit more pages than this is an error
PARSER_FAILURE_MIN_PAGES = 3  # ... and at least this many pages
SURVEY_REPEAT_SHARE = 0.5  # lesson 00: a text on at least half the pages is "repeated"
KEPT_REMOVED_MAX_CHARS = 400  # lesson 03's side-by-side view: a longer run shows its start and its end
SURVEY_MIN_CHARS = 3  # lesson 00: shorter texts (bullets, "¶") are not counted as repeats

# --- chunking (lessons 01, 04, 05) ------------------------------------------------------------
NAIVE_CHUNK_CHARS = 1000  # lesson 01: fixed chunks of 1,000 characters ...
NAIVE_OVERLAP_CHARS = 200  # ... repeating the last 200
CHUNK_OVERLAP_BLOCKS = 0  # lesson 04's sweep: one block of overlap did not beat none
CHUNK_MARGIN_TOKENS = 0  # lesson 05: tokens held back from the window (e.g. for an instruction prefix)
CONTEXT_MAX_SHARE = 0.5  # lesson 04: a context line (title > heading path) that fills the window on its own
#                           is cut at a word to this share of a chunk's tokens, ending in "…" (never the body)
PREFER_BLANK = 0.6  # lesson 05: cut long code at a blank line once a piece is 60% of the budget
WINDOW_TOKENS = 256  # lesson 05: the bundled MiniLM's real input limit (max_seq_length), where a
#                      viewer needs a number before any model is loaded; code that has a model asks
#                      it (`models.max_input_tokens`)
SPECIAL_TOKENS = 2  # lesson 05: [CLS] and [SEP], added to every text a BERT-style model reads
TOKEN_COUNT_CACHE = 50_000  # lesson 05: texts whose token count is remembered
TOKENIZE_BATCH = 1024  # lesson 05: texts tokenized per call
WINDOW_CHARS_PERCENTILE = 5  # lesson 10: a character-counting library's bound is set at the characters
#                             per token of the corpus's densest 5% of window-sized spans (tables,
#                             code), not the mean, so 95% of such spans fit the window

# --- retrieval (lessons 06, 07) ---------------------------------------------------------------
BM25_K1 = 1.5  # lesson 06: rank_bm25's and Lucene's defaults ...
BM25_B = 0.75  # ... for term saturation and length normalisation
RRF_K = 60  # lesson 06: the original paper's k, kept fixed: choosing k on dev would tune on the
#              questions we report (lesson 06 shows the sweep and its spread)
FUSION_CANDIDATES = 50  # lesson 06: each retriever's list length before fusion
RERANK_TOP_N = 30  # lesson 07: the fused shortlist the re-ranker re-orders
RERANK_BATCH_SIZE = 32  # lesson 07: pairs per forward pass of the re-ranker
RERANK_MAX_TOKENS = 512  # lesson 07: a cross-encoder's input, question and chunk together
TOKEN_PROJECTION_SAMPLE = 50_000  # lesson 07: token vectors a projected index's directions are fitted on
TOKEN_VECTOR_CACHE = 4096  # lesson 07: chunks whose MaxSim token vectors stay in memory
EMBED_BATCH_SIZE = 32  # lesson 01: texts per forward pass of the embedder
EMBED_ESTIMATE_MIN_TEXTS = 2000  # the command line says how long embedding this many new texts will take
# issue 27: the ColBERTv2-style residual token index (benchmarks/residual_index.py, bench_serving.py)
RESIDUAL_BITS = 2  # bits per dimension of a residual token index's codes (ColBERTv2 uses 1 or 2)
RESIDUAL_SAMPLE = 131_072  # token vectors its centroids and buckets are fitted on (k-means on 2 cores)
RESIDUAL_KMEANS_ITERATIONS = 4  # Lloyd iterations for its centroids (ColBERTv2's; 10 shrank the residual 2%)
RESIDUAL_BUCKET_ITERATIONS = 15  # Lloyd-Max rounds refining its buckets past ColBERTv2's quantiles

# --- evaluation (lesson 02) -------------------------------------------------------------------
EVAL_DEPTH = 20  # rankings are judged to this depth: recall@20 and MRR@20
EVAL_CUTOFFS = (5, 20)  # recall@5 (what fits a prompt) and recall@20 (what a re-ranker can reach)
CONTEXT_BUDGET_TOKENS = 1000  # tokens of ranked context for the budget metrics (lesson 02)
CONFIDENCE = 0.95  # lesson 02: every interval is a 95% interval, every test at 5%
N_RESAMPLES = 10_000  # bootstrap and permutation resamples for continuous metrics (MRR)
RESAMPLE_BLOCK = 2_000_000  # values held at once while resampling: memory stays flat as a golden file grows
SIGN_FLIP_EXACT_MAX = 16  # sign-flip test: up to 16 changed questions, all 65,536 sign patterns are counted
SIGN_FLIP_MAX_RESAMPLES = 1_280_000  # ... beyond, random ones, doubled from N_RESAMPLES while a Holm level
#                                      lies within SIGN_FLIP_Z standard errors of p, up to this many
SIGN_FLIP_Z = 4.0  # a verdict whose p stops z = 4 errors from a level is on the wrong side once in 30,000
SIGN_FLIP_FAMILY_MAX = 64  # the levels kept clear: alpha / j for Holm families of up to 64 comparisons
# "No difference" means shown within +-margin by two one-sided tests, Holm-corrected over the family.
# recall@k (and recall@budget): 0.05 is 10 of the ~200 answerable questions of a split, one in twenty
# found or lost in the top five, the smallest change a reader of five chunks would notice; a narrower
# margin could almost never be shown on ~200 questions (lesson 02b, section 6: at 10% discordant
# questions the 90% interval alone is +-0.037 wide, and a Holm step of a family widens it further).
EQUIVALENCE_MARGIN = 0.05  # lesson 02b: recall@k's margin, 10 of ~200 questions (above)
# MRR: a mean of 1/rank, so its margin is argued in ranks, not in questions found. 0.05 of MRR over
# ~200 questions is a total of 10 in 1/rank: 10 questions losing their first-place answer altogether
# (the recall margin's worst case), or 20 falling from first to second, or 40 from second to fourth.
# Moves inside the top five cost a reader of five chunks little, so no tighter margin is wanted; and
# MRR's per-question differences spread a little less than recall@5's for the same step (0.8 to 0.9
# of their standard deviation on lesson 09's steps), so 0.05 is as reachable on ~200 questions.
MRR_EQUIVALENCE_MARGIN = 0.05  # lesson 02b: MRR's margin, 10 first places lost of ~200 (above)
POWER = 0.8  # lesson 02: the power at which a split's minimum detectable difference is computed
FAMILY_SIZE = 1  # lesson 02: a comparison judged alone; a table's power figure passes its Holm family's size
POWER_RECALL = 0.8  # lesson 02: the recall@5 both runs share when the power of "equivalent" is computed
POWER_DRAWS = 2000  # lesson 02: simulated paired tables behind an equivalence power (standard error <= 0.011)
PRIMARY_METRICS = ("recall@5", "mrr")  # lesson 02: the primary family's metrics; a table of comparisons on
#                                        any other metric (recall@20, budget ratios, latency) is a
#                                        secondary family, Holm-corrected on its own and printed as such
SEED = 0  # every random draw (resamples, samples) is repeatable
DISPLAY_DIGITS = 3  # figures in tables and verdicts: three decimals (one question in 200 is 0.005)
GOLDEN_DRAFT_SIZE = 40  # lesson 10: quotes `golden-draft` proposes for a new site
ASK_SOURCES = 5  # the sources `ask` and `compare` print: the k of recall@5, the course's headline metric

# --- diversity (lesson 09) --------------------------------------------------------------------
MAX_CHUNKS_PER_PAGE = 2  # lesson 09: the cap on one page's chunks in a result list
MMR_WEIGHT = 0.7  # lesson 09: relevance against novelty in maximal marginal relevance
CHUNK_VIEW_AROUND_CHARS = 1500  # lesson 04's cut map: characters shown either side of the focus
CHUNK_VIEW_REPEAT_CHARS = 20  # lesson 10's chunk viewer: a repeated prefix this long is overlap

# --- serving (lesson 08) ----------------------------------------------------------------------
PROMPT_CHUNKS = 4  # the production write-up went from eight chunks to four
SECTION_LABEL_CHARS = 48  # lesson 08's tables: a chunk's section label is cut to this many characters
RESULT_TTL_SECONDS = 300.0  # seconds a cached result stays valid
RESULT_CACHE_SIZE = 1024  # lesson 08: distinct (query, filters) results kept
QUERY_CACHE_SIZE = 4096  # lesson 08: query vectors kept in memory
SERVE_BLAS_THREADS = 1  # lesson 08: BLAS threads while a query is computed (its products are small)
ONNX_OPSET = 17  # lesson 08: the ONNX opset the query encoder is exported at (TorchScript exporter)
ANSWER_MAX_TOKENS = 500  # lesson 08: the longest answer asked of an LLM, where a key is configured
LLM_MODEL = "claude-sonnet-4-5"  # lesson 08: the model `ask_llm` sends a prompt to, where a key is configured

# --- PostgreSQL + pgvector (lesson 11) --------------------------------------------------------
HNSW_EF_SEARCH = 40  # pgvector's default candidate list for an HNSW query
PG_BUILD_MEMORY = "1GB"  # lesson 11: maintenance_work_mem for an HNSW build (the graph fits: no spill)
GROWTH_NOISE = 0.05  # lesson 11: how far the copies of the real vectors are moved (unit vectors)

# --- the pipelines ----------------------------------------------------------------------------
FINAL_PIPELINE = "reranked"  # what `ask`, `compare`, the benchmarks and lesson 09 call final

# --- languages --------------------------------------------------------------------------------
ENGLISH_MIN_FUNCTION_SHARE = 0.1  # lesson 00: text is English when this share of its words are "the", "of"...
NOT_ENGLISH_WARN_SHARE = 0.5  # lesson 00: the survey warns when more of a corpus's pages than this are not
