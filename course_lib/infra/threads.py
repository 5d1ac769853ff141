"""Native thread pools held to what a small computation needs.

NumPy's BLAS hands every matrix product to a pool of threads, and PyTorch runs a model's layers on
its own pool (as many threads as cores). A query's products are small, and on busy cores the
pools' threads fight over them: `blas_limit` caps BLAS inside a block, and `one_text_threads` is
the library's rule for encoders: a single text (a question) is encoded on one thread, a batch of
chunks on every core.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import lru_cache

import threadpoolctl

# Threads that encode one text. Measured on two cores with one busy process beside the encoder:
# models.embed of one question 471 ms p50 at PyTorch's two threads (see benchmarks/bench_latency.py).
SINGLE_TEXT_THREADS = 1


@lru_cache(maxsize=1)
def _thread_pools() -> threadpoolctl.ThreadpoolController:
    """The process's native thread pools, found once (finding them takes milliseconds)."""
    return threadpoolctl.ThreadpoolController()


def blas_limit(threads: int | None) -> AbstractContextManager:
    """Inside the block, NumPy's BLAS uses at most `threads` threads (None: unchanged).

    A query's matrix products are small (one dot product over the index, MaxSim over a 30-chunk
    shortlist): handing each to a thread pool costs more than the pool saves, and on busy cores
    far more (measured on two loaded cores: re-rank p50 89 ms with the default pool,
    11 ms with one thread). The model runtimes keep their own threads (see `torch_threads`).
    """
    return nullcontext() if threads is None else _thread_pools().limit(limits=threads, user_api="blas")


_torch_lock = threading.Lock()
_torch_state = {"users": 0, "saved": 0}


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Inside the block, PyTorch's intra-op pool uses `threads` threads; the process's own count
    comes back when the last block open in any thread ends. A no-op where PyTorch was never
    imported (an ONNX-only process pays no torch import for it).

    The count is global to the process, so overlapping blocks share it: the first saves the count,
    the last restores it."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _torch_lock:
        if _torch_state["users"] == 0:
            _torch_state["saved"] = torch.get_num_threads()
        _torch_state["users"] += 1
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        with _torch_lock:
            _torch_state["users"] -= 1
            if _torch_state["users"] == 0:
                torch.set_num_threads(_torch_state["saved"])


@contextmanager
def one_text_threads(count: int) -> Iterator[None]:
    """The encoders' rule: `count` == 1 (a question) runs on `SINGLE_TEXT_THREADS` threads of
    PyTorch and of BLAS, since a thread pool costs one short sequence more than it saves and, beside
    another busy process, many times more; more texts (a batch of chunks) keep every core."""
    if count != 1:
        yield
        return
    with torch_threads(SINGLE_TEXT_THREADS), blas_limit(SINGLE_TEXT_THREADS):
        yield
