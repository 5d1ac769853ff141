"""Two processes writing one cache folder at once: every vector must come back, and right.

This is the classroom case (learners sharing one COURSE_CACHE_DIR) and the two-notebooks case.
Each writer stores small rows (embeddings, kept inside SQLite) and large matrices (token
vectors, kept in their own files) in many small transactions, over key ranges that overlap, so
the writers really contend.
"""
import subprocess
import sys
import textwrap

import numpy as np

from course_lib.infra.models import EmbeddingCache
from course_lib.infra.vector_cache import VectorStore

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from course_lib.infra.vector_cache import VectorStore

    root, go, first, last = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rows = VectorStore(root / "rows", dtype=np.float32)
    tokens = VectorStore(root / "tokens", dtype=np.float16)
    while not go.exists():  # start together
        time.sleep(0.01)
    for start in range(first, last, 10):
        keys = [f"k{i}" for i in range(start, min(start + 10, last))]
        rows.put_many(keys, [np.full((1, 384), int(k[1:]), np.float32) for k in keys])
        tokens.put_many(keys, [np.full((60 + int(k[1:]) % 7, 384), int(k[1:]) % 1000, np.float16)
                               for k in keys])
    rows.close(); tokens.close()
""")


def test_two_writers_at_once_lose_and_damage_nothing(tmp_path):
    go = tmp_path / "go"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(go), str(a), str(b)],
                                stderr=subprocess.PIPE, text=True)
               for a, b in ((0, 300), (150, 450))]
    go.touch()
    errors = [w.communicate(timeout=300)[1] for w in writers]
    assert [w.returncode for w in writers] == [0, 0], errors
    assert not any("course_lib cache" in e for e in errors)  # no writer fell back to no caching
    rows = VectorStore(tmp_path / "rows", dtype=np.float32)
    tokens = VectorStore(tmp_path / "tokens", dtype=np.float16)
    assert len(rows) == len(tokens) == 450
    for i in range(450):
        assert np.array_equal(rows.get(f"k{i}", width=384), np.full((1, 384), i, np.float32))
        matrix = tokens.get(f"k{i}", width=384)
        assert matrix.shape == (60 + i % 7, 384) and np.all(matrix == np.float16(i % 1000))


def test_the_embedding_cache_reads_what_another_process_wrote(tmp_path):
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        import numpy as np
        from course_lib.infra.models import EmbeddingCache
        EmbeddingCache("m", root=Path(sys.argv[1])).put_many(["a", "b"], np.eye(2, 3, dtype=np.float32))
    """)
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    cache = EmbeddingCache("m", root=tmp_path)
    assert np.array_equal(cache.get("b"), np.array([0, 1, 0], np.float32)) and cache.get("c") is None
