# The two commands a learner needs: `make lab` to work through the course, `make test` to test it.
# Both create the virtual environment on first use. Everything runs offline except pip.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export TOKENIZERS_PARALLELISM := false
# Tests and the headless course run must never wait on a model hub; `make lab` leaves the
# choice to the learner, so an online learner can load any model by name.
test unit unit-fast notebooks course warm browser-check ship-embeddings: export HF_HUB_OFFLINE := 1
# ... nor call a paid LLM API, even when a key is set in the environment.
unit unit-fast notebooks course browser-check: export COURSE_OFFLINE_LLM := 1

.PHONY: setup lab course readme test lint unit unit-fast notebooks check clean-cache warm handout browser-check ship-embeddings

setup: $(STAMP)

# constraints.txt: the versions CI passed with; pyproject.toml keeps the floors the code needs.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e .[peers,serve,e5]
	touch $(STAMP)

## lab: open the course in JupyterLab
lab: setup
	$(VENV)/bin/jupyter lab notebooks/

## course: run every notebook top to bottom in place, one at a time, each once the machine is quiet
## (1-minute load settled at or below 1.5, waiting up to 15 min), then summarise what each lesson measured
course: setup
	$(PY) scripts/run_notebooks.py notebooks/

## readme: copy the runtimes `make course` measured into the README's lesson table
readme: setup
	$(PY) scripts/update_readme.py

## test: ruff, the unit, property and data tests, the cache warm-up, then every notebook under nbval,
## one step after the other; the first step that fails stops it. The warm-up is a step of its own: on a
## cold clone it encodes the re-ranker's token vectors on every core, and the notebooks read them from disk.
## TEST_STAGE: a command each step runs under, given its name first (.ci/run passes .ci/stage: each step's time).
TEST_STEPS := lint unit warm notebooks
TEST_STAGE ?=
test: setup
	@for step in $(TEST_STEPS); do \
	    $(if $(TEST_STAGE),$(TEST_STAGE) "make $$step") $(MAKE) --no-print-directory $$step || exit $$?; \
	done

## lint: ruff over the library, tests, benchmarks and scripts (its rules, complexity included, and the
## folders' import layers for lint-imports: both in pyproject.toml)
lint: setup
	$(VENV)/bin/ruff check course_lib tests benchmarks scripts notebooks/conftest.py
	$(VENV)/bin/lint-imports --no-cache

unit: setup
	$(PY) -m pytest tests -q

## unit-fast: the unit tests that load no model
unit-fast: setup
	$(PY) -m pytest tests -q -m "not model"

notebooks: setup
	$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/ -q

check: setup
	$(PY) -m course_lib check

## warm: pre-compute every embedding and the token vectors lessons 07-09 re-rank (09's ablations too) into COURSE_CACHE_DIR
warm: setup
	$(PY) scripts/warm_cache.py

## ship-embeddings: rewrite data/embeddings/ (the float32 vectors shipped for a fast cold start) from the
## local cache; run `make course` first so it holds every chunking the lessons build
ship-embeddings: setup
	$(PY) scripts/ship_embeddings.py

## handout: learner copies of the lessons without outputs or solutions, in handout/ (git-ignored)
handout: setup
	$(PY) scripts/make_handout.py

## browser-check: lesson 00 run in JupyterLab in headless chromium, then lesson 09's committed plot checked to render;
## screenshots in artifacts/
browser-check: setup
	$(PY) scripts/browser_check.py

clean-cache:
	rm -rf .cache
