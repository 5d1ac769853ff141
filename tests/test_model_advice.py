""""Needs internet access" is the advice only when a model's files are missing and could not be
downloaded (huggingface_hub's LocalEntryNotFoundError in the chain of causes); a folder without a
model, a wrong name or another failure gets its own advice (course_lib.infra.models, core.rerank)."""
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError

from course_lib.core.rerank import CrossEncoderReranker
from course_lib.infra import models
from course_lib.infra.errors import ModelLoadError


def _wrapped(cause: Exception) -> OSError:
    """An OSError raised from `cause`, as transformers wraps a hub error."""
    try:
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files") from cause
    except OSError as err:
        return err


def test_a_missing_download_is_found_anywhere_in_the_chain():
    assert models.is_missing_download(_wrapped(LocalEntryNotFoundError("not in the disk cache")))
    assert models.is_missing_download(ConnectionError("no route to host"))
    assert not models.is_missing_download(ValueError("Unrecognized model: no model_type in config.json"))
    assert not models.is_missing_download(_wrapped(RuntimeError("size mismatch for weight")))


def test_the_embedder_says_internet_only_for_a_missing_download():
    missing = str(models._load_error("no-such/model", _wrapped(LocalEntryNotFoundError("gone")), local=False))
    assert "needs internet access" in missing and "pass a local folder" in missing
    broken = str(models._load_error("/my/model", ValueError("Unrecognized model"), local=True))
    assert "internet" not in broken and "config.json" in broken
    odd = str(models._load_error("org/model", RuntimeError("size mismatch"), local=False))
    assert "internet" not in odd and "Check the name" in odd


@pytest.mark.model
def test_a_folder_without_a_tokenizer_is_not_blamed_on_the_network(tmp_path):
    with pytest.raises(ModelLoadError) as info:
        models.load_tokenizer(str(tmp_path))
    assert "internet" not in str(info.value) and "config.json" in str(info.value)


@pytest.mark.model  # imports sentence-transformers to stand in for its CrossEncoder
@pytest.mark.parametrize("cause, says_internet", [
    (_wrapped(LocalEntryNotFoundError("not cached and no network")), True),
    (RuntimeError("unsupported architecture"), False),
])
def test_the_cross_encoder_says_internet_only_for_a_missing_download(monkeypatch, cause, says_internet):
    import sentence_transformers

    def fails(*args, **kwargs):
        raise cause

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sentence_transformers, "CrossEncoder", fails)
    with pytest.raises(ModelLoadError) as info:
        CrossEncoderReranker("org/some-cross-encoder")
    message = str(info.value)
    assert ("needs internet access" in message) is says_internet
    assert "MaxSimReranker" in message and "local folder" in message
