"""The environment self-check: one OK/FAIL line per requirement of the course.

Run it as `python -m course_lib check` or from lesson 00. Each check returns (ok, detail) and
never raises, so one failure does not hide the others.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

# The torch the course pins, the CPU build. pyproject.toml, constraints.txt, environment.yml and the
# install lines of the docs spell it out for pip and conda; tests/test_environment.py checks that each
# agrees with this one.
TORCH_VERSION = "2.13.0"
REQUIRED_PACKAGES = (
    "torch", "sentence_transformers", "transformers", "numpy", "bs4", "lxml", "html5lib",
    "rank_bm25", "matplotlib", "tqdm", "nbval", "hypothesis",
)


@dataclass(frozen=True)
class CheckResult:
    """One requirement: its name, whether it is met, what was found, and the error if one was
    raised (kept so `--debug` can show its traceback)."""

    name: str
    ok: bool
    detail: str
    error: BaseException | None = field(default=None, compare=False, repr=False)


def _python() -> tuple[bool, str]:
    version = ".".join(map(str, sys.version_info[:3]))
    return sys.version_info >= (3, 10), f"Python {version} (3.10 or newer needed)"


def _packages() -> tuple[bool, str]:
    missing = []
    for name in REQUIRED_PACKAGES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        return False, f"missing: {', '.join(missing)} (run `make setup`)"
    return True, "all importable"


def _torch_cpu() -> tuple[bool, str]:
    import torch

    cuda = torch.version.cuda
    pin = f"the course pins the CPU build torch=={TORCH_VERSION}"
    build = "" if cuda is None else f" is a CUDA {cuda} build; {pin}"
    return cuda is None, f"torch {torch.__version__}{build}"


def _model() -> tuple[bool, str]:
    from course_lib.infra import models

    embedder = models.load_embedder()
    dim = embedder.get_embedding_dimension()
    limit = models.max_input_tokens()
    return (dim, limit) == (384, 256), (f"bundled all-MiniLM-L6-v2 loads offline: dim {dim}, "
                                        f"max_seq_length {limit}")


def _embedding() -> tuple[bool, str]:
    from course_lib.infra import models

    texts = ["a cat sat on the mat", "a kitten sat on a rug", "tax law of 1999"]
    vectors = models.embed(texts, use_cache=False, progress=False)
    close, far = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    return close > far, f"similar sentences score {close:.2f} > unrelated {far:.2f}"


def _corpus() -> tuple[bool, str]:
    from course_lib.core import load as corpus

    pages = corpus.load_pages()
    return len(pages) > 0, f"{len(pages)} pages verified against {corpus.MANIFEST.name}"


def _language() -> tuple[bool, str]:
    """A warning, never a failure: the bundled embedder reads English only, so a corpus mostly in
    another language is named with the multilingual embedder to pass (`survey.language_note`)."""
    from course_lib.core import load as corpus
    from course_lib.extras.survey import language_note

    return True, language_note(corpus.load_pages())


def _cache() -> tuple[bool, str]:
    from course_lib.infra.paths import cache_dir

    folder = cache_dir()
    probe = folder / ".write-test"
    probe.write_text("ok")
    probe.unlink()
    return True, f"cache folder writable: {folder}"


CHECKS: dict[str, Callable[[], tuple[bool, str]]] = {
    "python": _python,
    "packages": _packages,
    "torch CPU build": _torch_cpu,
    "embedding model": _model,
    "embeddings make sense": _embedding,
    "corpus": _corpus,
    "corpus language": _language,
    "cache": _cache,
}


def run_checks() -> list[CheckResult]:
    """Run every check; an exception becomes a FAIL line with its message."""
    results = []
    for name, check in CHECKS.items():
        try:
            results.append(CheckResult(name, *check()))
        except Exception as err:  # noqa: BLE001 - every failure is a FAIL line; the error is kept
            results.append(CheckResult(name, False, f"{type(err).__name__}: {err}", err))
    return results


def format_results(results: list[CheckResult]) -> str:
    lines = [f"{'OK  ' if r.ok else 'FAIL'}  {r.name:<22} {r.detail}" for r in results]
    return "\n".join(lines)
