"""The bundled MiniLM on ONNX Runtime: the same sentence vectors, computed without PyTorch.

Lesson 08's "serve it fast" step. The transformer is exported once, on the learner's machine,
from the bundled weights (`torch.onnx.export`, TorchScript exporter, a few seconds, no download)
and cached under COURSE_CACHE_DIR/onnx, keyed by the fingerprint of the model's files, so a
changed model is exported again and a classroom's shared cache serves everyone's queries.
ONNX Runtime then runs it; mean pooling over the attention mask and L2 normalisation are done
here in NumPy exactly as sentence-transformers' MiniLM pipeline does them (same tokenizer, same
`max_seq_length`), so float32 vectors equal PyTorch's to the last few bits.

`quantize="int8"` adds dynamic int8 weights (`onnxruntime.quantization.quantize_dynamic`, no
calibration): faster, but its vectors DIFFER (cosine about .95-.97), so it is a measured variant,
never a silent default. Where `onnxruntime` is not installed, asking for ONNX raises a
`ModelLoadError` that names the package: a choice of runtime should never fall back silently,
because the figures would then describe another encoder than the one asked for.
"""
from __future__ import annotations

import io
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from course_lib import settings
from course_lib.infra import models
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.files import atomic_write, file_sha256
from course_lib.infra.paths import cache_dir
from course_lib.infra.threads import SINGLE_TEXT_THREADS
from course_lib.infra.vector_cache import warn_once

ENCODERS = ("torch", "onnx", "onnx-int8")  # what `encoder=` accepts; "torch" is the default everywhere
QUANTIZATIONS = (None, "int8")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
exports = {"count": 0}  # how many exports this process ran (tests check that a cache is reused)


def require_onnxruntime():
    """The `onnxruntime` module, or a ModelLoadError that says which package to install."""
    try:
        import onnxruntime
    except ImportError as err:
        raise ModelLoadError(
            "encoder='onnx' needs the package onnxruntime (and onnx to export), which is not "
            "installed: `pip install onnxruntime onnx`, or use the default encoder='torch'."
        ) from err
    return onnxruntime


def onnx_path(model: str | None = None, *, quantize: str | None = None,
              root: Path | None = None) -> Path:
    """Where the exported model lives: named by the model files' fingerprint, limit and variant."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"quantize must be one of {QUANTIZATIONS}, not {quantize!r}")
    variant = "float32" if quantize is None else quantize
    limit = max_seq_length(model)
    name = f"{models.model_fingerprint(model)}-max{limit}-{variant}.onnx"
    return (root or cache_dir() / "onnx") / name


def max_seq_length(model: str | None = None) -> int:
    """The model's input limit from its sentence-transformers config, without loading PyTorch
    (a cold start should not pay for the runtime it avoids); else from the loaded model."""
    target, local = models.resolve_model(model)
    config = Path(target) / "sentence_bert_config.json"
    if local and config.is_file():
        limit = json.loads(config.read_text()).get("max_seq_length")
        if isinstance(limit, int):
            return limit
    return models.max_input_tokens(model)


def _traced_module(model: str | None):
    """The embedder's transformer wrapped to take the three inputs by name and return the token
    vectors: recent transformers put `use_cache` where a tracer passes its third input."""
    import torch

    transformer = models.load_embedder(model)[0].auto_model.eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    return TokenVectors().eval()


def export_onnx(model: str | None, path: Path) -> Path:
    """Export the transformer to `path` (atomically), with batch and sequence length dynamic.

    TorchScript exporter (`dynamo=False`): it needs no extra packages and takes about 6 s on
    two cores. The example input has two texts of different lengths, so padding is traced.
    """
    import torch

    tokenizer = models.load_tokenizer(model)
    example = tokenizer(["an example", "a longer example, so that one text is padded"],
                        padding=True, return_tensors="pt")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "token_embeddings")}
    buffer = io.BytesIO()
    # The tracer warns that shape checks become constants; with dynamic axes they are the same
    # for every input (the tests compare vectors at other lengths and batch sizes), so hush them.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_traced_module(model), tuple(example[name] for name in INPUTS), buffer,
                          input_names=list(INPUTS), output_names=["token_embeddings"],
                          dynamic_axes=dynamic, opset_version=settings.ONNX_OPSET, dynamo=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, buffer.getvalue())
    record_export(path, model)
    exports["count"] += 1
    return path


def record_path(path: Path) -> Path:
    """The file beside an export that records its digest: `<name>.onnx.sha256`."""
    return path.with_name(path.name + ".sha256")


def record_export(path: Path, model: str | None) -> None:
    """Write the sha256 of a file just exported (or quantised) and the fingerprint of the model it
    came from, so a later load serves only the file this library wrote for that model."""
    atomic_write(record_path(path), f"{file_sha256(path)}  {models.model_fingerprint(model)}\n")


def export_is_recorded(path: Path, model: str | None) -> bool:
    """Whether `path` is the file exported for `model`: its sha256 and the model's fingerprint match
    the record written at export. A file without a record (exported before records were kept) is
    silently exported again; one that does not match (edited, replaced, swapped from another model)
    says so in one warning line first. A changed file can choose every query's results, so it is
    never loaded on trust."""
    try:
        recorded = record_path(path).read_text(encoding="utf-8").split()
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        recorded = []
    if recorded == [file_sha256(path), models.model_fingerprint(model)]:
        return True
    warn_once(path, "does not match the digest recorded when it was exported (edited, replaced or "
                    "damaged): exported again")
    return False


def quantize_int8(source: Path, path: Path, *, model: str | None = None) -> Path:
    """Dynamic int8 weights (no calibration data) from the float32 export, written atomically."""
    require_onnxruntime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root_logger = logging.getLogger()
    level = root_logger.level
    root_logger.setLevel(logging.ERROR)  # its "consider pre-processing" advice is for calibrated int8
    try:
        with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
            partial = Path(scratch) / path.name
            quantize_dynamic(str(source), str(partial), weight_type=QuantType.QInt8)
            os.replace(partial, path)
    finally:
        root_logger.setLevel(level)
    record_export(path, model)
    exports["count"] += 1
    return path


def ensure_onnx(model: str | None = None, *, quantize: str | None = None,
                root: Path | None = None) -> Path:
    """The cached ONNX file of a model (and variant), exported (and quantised) only if absent or
    not the file recorded at its export (`export_is_recorded`)."""
    path = onnx_path(model, quantize=quantize, root=root)
    if path.exists() and export_is_recorded(path, model):
        return path
    source = onnx_path(model, root=root)
    if source == path or not (source.exists() and export_is_recorded(source, model)):
        export_onnx(model, source)
    return quantize_int8(source, path, model=model) if quantize else source


@lru_cache(maxsize=8)
def _session(path: Path, threads: int | None, stamp: int):
    runtime = require_onnxruntime()
    options = runtime.SessionOptions()
    # Its threads otherwise spin on the cores after each run, waiting for the next one; the
    # re-ranker's and BM25's work that follows then competes with them (measured: a served
    # query's re-rank stage about 1.9x slower on two busy cores).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    return runtime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def mean_pool(token_vectors: np.ndarray, mask: np.ndarray, *, normalize: bool = True) -> np.ndarray:
    """sentence-transformers' mean pooling (masked mean, count clamped at 1e-9), then its
    `Normalize` (L2, norm clamped at 1e-12): one row per text."""
    weights = mask[..., None].astype(np.float32)
    pooled = (token_vectors * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    if not normalize:
        return pooled.astype(np.float32)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def unit_tokens(token_vectors: np.ndarray, ids: np.ndarray, mask: np.ndarray, special: np.ndarray, *,
                dtype: type = np.float16) -> np.ndarray:
    """One text's token vectors as MaxSim reads them: padding and special tokens ([CLS], [SEP])
    dropped, each row L2-normalised, cast to `dtype` (float16, what the re-ranker's stores keep)."""
    keep = (mask == 1) & ~np.isin(ids, special)
    vectors = np.asarray(token_vectors, np.float32)[keep]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(dtype)


@dataclass(frozen=True)
class QueryPass:
    """What one forward pass over a question gives: the dense stage's unit sentence vector and the
    MaxSim re-ranker's unit token vectors (special tokens dropped), and how many word pieces the
    model read (special tokens counted), so a re-ranker with a lower limit can tell it cut less."""

    vector: np.ndarray
    tokens: np.ndarray
    pieces: int


class OnnxEncoder:
    """A sentence encoder with the call shape `models.embed` uses of a SentenceTransformer:
    `encode(texts, batch_size=, normalize_embeddings=, ...)`, `get_embedding_dimension()`,
    `max_seq_length`.

    Texts are stripped and tokenized as sentence-transformers does (padding, truncation at the
    model's `max_seq_length`). `threads` sets ONNX Runtime's intra-op threads for every run; None
    follows the library's rule (`infra.threads.one_text_threads`, for PyTorch): a single text on
    `SINGLE_TEXT_THREADS` thread, a batch on one thread per core. ONNX Runtime fixes its threads
    when a session is made, so the rule holds a second session for single texts, made on first
    use. Construction exports on first use and reuses the cached file afterwards.
    """

    def __init__(self, model: str | None = None, *, quantize: str | None = None,
                 threads: int | None = None, root: Path | None = None):
        require_onnxruntime()
        self.model = model
        self.quantize = quantize
        self.path = ensure_onnx(model, quantize=quantize, root=root)
        self.tokenizer = models.load_tokenizer(model)
        self.max_seq_length = max_seq_length(model)
        self.threads = threads
        self._stamp = self.path.stat().st_mtime_ns
        try:
            self.session = _session(self.path, threads, self._stamp)
        except Exception as err:  # ONNX Runtime's own error types (InvalidProtobuf, Fail, ...)
            cause = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ModelLoadError(f"{self.path}: not a usable ONNX model ({cause}); delete it and "
                                 f"{record_path(self.path).name} to export it again") from err
        self.name = f"onnx-{quantize or 'float32'}:{model or models.DEFAULT_EMBEDDER}"
        self._width: int | None = None
        self._special = np.array(sorted(set(self.tokenizer.all_special_ids)))

    def _run(self, texts: Sequence[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The transformer's output for one batch, (texts, tokens, dims), and the inputs it read."""
        batch = self.tokenizer([str(t).strip() for t in texts], padding=True,
                               truncation="longest_first", max_length=self.max_seq_length,
                               return_tensors="np")
        feeds = {name: np.asarray(batch[name], np.int64) for name in INPUTS}
        return self.session_for(len(texts)).run(None, feeds)[0], feeds

    def session_for(self, count: int):
        """The session that runs `count` texts: for one text (a question) a session on
        `SINGLE_TEXT_THREADS` intra-op thread, whose pool cannot fight another busy process for
        the cores over one short sequence; for a batch, or when `threads` was given, the
        encoder's own session."""
        if count != 1 or self.threads is not None:
            return self.session
        return _session(self.path, SINGLE_TEXT_THREADS, self._stamp)

    def token_vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The transformer's output for one batch: (texts, tokens, dims) and the attention mask."""
        output, feeds = self._run(texts)
        return output, feeds["attention_mask"]

    def encode_query(self, text: str) -> QueryPass:
        """A question's sentence vector AND its token vectors from ONE forward pass.

        The dense stage needs the pooled vector and a MaxSim re-ranker the token vectors it was
        pooled from; running the model once for both halves the model time of a served question.
        The vector equals `encode([text], normalize_embeddings=True)[0]`; the tokens are what
        `MaxSimReranker.encode_tokens` computes, here from this runtime's forward pass.
        """
        output, feeds = self._run([text])
        mask = feeds["attention_mask"]
        tokens = unit_tokens(output[0], feeds["input_ids"][0], mask[0], self._special)
        return QueryPass(mean_pool(output, mask)[0], tokens, int(mask.sum()))

    def encode(self, texts: Sequence[str] | str, *, batch_size: int = settings.EMBED_BATCH_SIZE,
               normalize_embeddings: bool = False, **_ignored) -> np.ndarray:
        """Sentence vectors (float32 rows), `batch_size` texts per run; a single string gives one
        row. Keywords only a SentenceTransformer uses (progress bar, numpy conversion) are
        accepted and ignored, so this drops in where `models.embed` calls `encode`."""
        items = [texts] if isinstance(texts, str) else list(texts)
        rows = [mean_pool(*self.token_vectors(items[i: i + batch_size]), normalize=normalize_embeddings)
                for i in range(0, len(items), batch_size)]
        if not rows:
            return np.zeros((0, self.get_embedding_dimension()), np.float32)
        found = np.concatenate(rows)
        self._width = found.shape[1]
        return found

    def get_embedding_dimension(self) -> int:
        """The vectors' width, read from the exported graph's output."""
        if self._width is None:
            self._width = int(self.encode(["width"]).shape[1])
        return self._width


@lru_cache(maxsize=8)
def _load(model: str | None, quantize: str | None, threads: int | None, fingerprint: str) -> OnnxEncoder:
    return OnnxEncoder(model, quantize=quantize, threads=threads)


def load_encoder(model: str | None = None, *, encoder: str = "torch", threads: int | None = None):
    """The query encoder `encoder` names: "torch" (the SentenceTransformer, the default), "onnx"
    (float32 on ONNX Runtime, same vectors) or "onnx-int8" (dynamic int8, different vectors).

    Cached per process and keyed by the model's fingerprint, like `models.load_embedder`.
    """
    if encoder not in ENCODERS:
        raise ValueError(f"encoder must be one of {ENCODERS}, not {encoder!r}")
    if encoder == "torch":
        return models.load_embedder(model)
    quantize = "int8" if encoder == "onnx-int8" else None
    return _load(model, quantize, threads, models.model_fingerprint(model))


def embed_queries(texts: Sequence[str], *, model: str | None = None, encoder: str = "torch",
                  threads: int | None = None) -> np.ndarray:
    """Unit vectors of queries from the encoder `encoder` names, computed now (no disk cache).

    The query path of `DenseRetriever(query_encoder=...)`. ONNX vectors never enter
    `models.embed`'s cache: they are not bit-identical to PyTorch's (int8 ones not even close),
    and that cache and the shipped vectors are keyed by the PyTorch model. A service's
    in-memory query cache still sits in front.
    """
    if encoder == "torch":
        return models.embed(list(texts), model=model, use_cache=False, progress=False)
    chosen = load_encoder(model, encoder=encoder, threads=threads)
    return chosen.encode(list(texts), normalize_embeddings=True)
