"""`verify` catches a changed byte; a model chosen by name is found, or is one line saying how to get it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from voice.errors import ModelError
from voice.models import resolve
from voice.models.catalog import Catalog, parse_catalog
from voice.models.verify import checked_folder, verify_present

WEIGHTS = b"weights of a small whisper" * 1000
DIGEST = hashlib.sha256(WEIGHTS).hexdigest()
MODELS_TXT = f"""\
# a catalog of two pulled models
whisper-test | asr | model.bin config.json | https://huggingface.co/a/b/resolve/main/ | {DIGEST} | MIT
piper-test | tts | voice.onnx voice.onnx.json | https://huggingface.co/c/d/resolve/main/ | {"0" * 64} | MIT
"""


@pytest.fixture
def catalog() -> Catalog:
    return parse_catalog(MODELS_TXT)


def pulled(store: Path) -> Path:
    """whisper-test in ``store`` as a pull leaves it."""
    where = store / "whisper-test"
    where.mkdir(parents=True)
    (where / "model.bin").write_bytes(WEIGHTS)
    (where / "config.json").write_text("{}")
    return where


def test_verify_passes_a_whole_model_and_names_one_with_a_byte_changed(catalog: Catalog, store: Path) -> None:
    where = pulled(store)
    assert [(c.entry.name, c.matches) for c in verify_present(catalog, store)] == [("whisper-test", True)]

    changed = bytearray(WEIGHTS)
    changed[len(changed) // 2] ^= 1
    (where / "model.bin").write_bytes(bytes(changed))
    assert [(c.entry.name, c.matches) for c in verify_present(catalog, store)] == [("whisper-test", False)]


def test_a_model_missing_a_file_is_not_present(catalog: Catalog, store: Path) -> None:
    (pulled(store) / "config.json").unlink()
    assert verify_present(catalog, store) == []
    with pytest.raises(ModelError, match=r"^asr model whisper-test is not present: run `voice models pull"):
        checked_folder(catalog.get("whisper-test"), store)


def test_a_model_is_chosen_by_its_name_or_its_size_name(catalog: Catalog, store: Path) -> None:
    where = pulled(store)
    assert resolve.asr_model("whisper-test", catalog, store) == str(where)
    assert resolve.asr_model("test", catalog, store) == str(where)  # whisper size name
    assert resolve.asr_model(str(where), catalog, store) == str(where)
    assert resolve.asr_model(None, catalog, store) is None


def test_a_size_name_not_pulled_is_left_to_faster_whispers_own_cache(catalog: Catalog, store: Path) -> None:
    assert resolve.asr_model("test", catalog, store) == "test"


def test_a_missing_or_corrupt_model_at_start_up_is_one_line_saying_how_to_fix_it(
    catalog: Catalog, store: Path
) -> None:
    with pytest.raises(ModelError) as missing:
        resolve.asr_model("whisper-test", catalog, store)
    assert str(missing.value) == (
        "asr model whisper-test is not present: run `voice models pull whisper-test`"
    )
    (pulled(store) / "model.bin").write_bytes(b"not the weights")
    with pytest.raises(ModelError) as corrupt:
        resolve.asr_model("whisper-test", catalog, store)
    assert str(corrupt.value) == (
        "asr model whisper-test is corrupt (its sha256 differs from models.txt): "
        "run `voice models pull whisper-test` again"
    )


def test_a_voice_is_chosen_by_name_and_a_model_of_the_wrong_role_refused(
    catalog: Catalog, store: Path
) -> None:
    with pytest.raises(ModelError, match="is not present: run `voice models pull piper-test`"):
        resolve.tts_voice("piper-test", catalog, store)
    with pytest.raises(ModelError, match="whisper-test is a model for asr, not tts"):
        resolve.tts_voice("whisper-test", catalog, store)
    assert resolve.tts_voice("~/voices/x.onnx", catalog, store) == Path("~/voices/x.onnx").expanduser()


def test_a_malformed_line_names_its_line() -> None:
    with pytest.raises(ModelError, match=r"models.txt line 2: sha256 must be 64 lower-case hex digits"):
        parse_catalog("# header\nbad | asr | model.bin | https://x/ | abc | MIT\n")
