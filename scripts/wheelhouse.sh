#!/usr/bin/env bash
# Install the course without internet in a classroom: build a wheelhouse once (online), then
# install every learner machine from it (offline).
#
#   scripts/wheelhouse.sh download [DIR]        # online: every dependency as wheels into DIR
#   scripts/wheelhouse.sh install  [DIR] [VENV] # offline: fresh venv from DIR, then an import check
#   scripts/wheelhouse.sh all      [DIR] [VENV] # both, timed (how it was tried end to end)
#
# DIR defaults to wheelhouse/ (git-ignored), VENV to .venv-wheelhouse. Copy DIR to a USB stick
# or a share; learners need the same OS, CPU architecture and Python minor version as the
# machine that downloaded it (wheels are platform-specific). torch stays pinned to the CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
action="${1:-all}"
dir="${2:-wheelhouse}"
venv="${3:-.venv-wheelhouse}"
python="${PYTHON:-python3}"

download() {
    mkdir -p "$dir"
    # `pip wheel`, not `pip download`: the course itself and any dependency published only as
    # source (langdetect, pulled in by unstructured) become wheels, so the offline install builds
    # nothing. With the [peers] and [serve] extras, as `make setup` installs them: lesson 10 runs the peer
    # libraries, and the ONNX query encoder needs onnxruntime.
    "$python" -m pip wheel --quiet --wheel-dir "$dir" -c constraints.txt ".[peers,serve,e5]"
    echo "wheelhouse: $(ls "$dir" | wc -l) files, $(du -sh "$dir" | cut -f1) in $dir"
}

install() {
    # Nothing but the folder: no pip config (its indexes and find-links) and no network.
    export PIP_CONFIG_FILE=/dev/null
    unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --no-index --find-links "$dir" --upgrade pip || true
    "$venv/bin/python" -m pip install --quiet --no-index --find-links "$dir" "course_lib[peers,serve,e5]"
    "$venv/bin/python" - <<'PY'
import importlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
for name in ("torch", "sentence_transformers", "transformers", "numpy", "bs4", "lxml", "rank_bm25",
             "diskcache", "nbval", "jupyterlab", "course_lib.infra.models", "course_lib.extras.peers",
             "langchain_text_splitters", "unstructured", "docling_core", "trafilatura"):
    importlib.import_module(name)
from course_lib.infra import models

vector = models.embed(["import check"], use_cache=False, progress=False)
import torch

print(f"import check OK: torch {torch.__version__}, embedding of shape {vector.shape}")
PY
    echo "installed $("$venv/bin/python" -m pip list 2>/dev/null | tail -n +3 | wc -l) packages into $venv"
}

timed() {
    local start=$SECONDS
    "$@"
    echo "$1 took $((SECONDS - start)) s"
}

case "$action" in
    download) timed download ;;
    install) timed install ;;
    all) timed download && timed install ;;
    *) echo "usage: $0 download|install|all [DIR] [VENV]" >&2; exit 2 ;;
esac
