"""Native thread pools held to what a small computation needs (the serving and re-ranking stages).

NumPy's BLAS hands every matrix product to a pool of threads. A query's products are small, and on
busy cores the pool's threads fight over them: `blas_limit` caps the pool inside a block.
"""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from functools import lru_cache

import threadpoolctl


@lru_cache(maxsize=1)
def _thread_pools() -> threadpoolctl.ThreadpoolController:
    """The process's native thread pools, found once (finding them takes milliseconds)."""
    return threadpoolctl.ThreadpoolController()


def blas_limit(threads: int | None) -> AbstractContextManager:
    """Inside the block, NumPy's BLAS uses at most `threads` threads (None: unchanged).

    A query's matrix products are small (one dot product over the index, MaxSim over a 30-chunk
    shortlist): handing each to a thread pool costs more than the pool saves, and on busy cores
    far more (measured on two loaded cores: re-rank p50 89 ms with the default pool,
    11 ms with one thread). The model runtimes keep their own threads.
    """
    return nullcontext() if threads is None else _thread_pools().limit(limits=threads, user_api="blas")
