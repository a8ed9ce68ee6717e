"""Whisper hears what piper says: text, word timings, and the CLI round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.word_error import normalized_words, words_wrong
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import write_wav
from voice.cli import main
from voice.errors import AudioError
from voice.tts.piper_voice import PiperSynthesizer

Capture = pytest.CaptureFixture[str]

ROUND_TRIP = "The quick brown fox jumps over the lazy dog while seven children watch from the garden wall."


@pytest.mark.models
def test_say_then_transcribe_round_trips_a_sentence(tmp_path: Path, capsys: Capture) -> None:
    wav = tmp_path / "said.wav"

    assert main(["say", ROUND_TRIP, "--out", str(wav)]) == 0
    capsys.readouterr()
    assert main(["transcribe", str(wav)]) == 0

    heard = capsys.readouterr().out
    assert len(ROUND_TRIP.split()) >= 12
    assert words_wrong(ROUND_TRIP, heard) <= 1, heard


@pytest.mark.models
def test_word_timings_follow_the_speech_in_order(
    transcriber: WhisperTranscriber, synthesizer: PiperSynthesizer
) -> None:
    speech = synthesizer.synthesize("Rain moves in from the west by noon.")

    transcript = transcriber.transcribe(speech.audio, word_timings=True)

    spoken = " ".join(word.text for word in transcript.words)
    assert normalized_words(spoken) == normalized_words(transcript.text)
    assert words_wrong("Rain moves in from the west by noon.", transcript.text) <= 1
    starts = [word.start_s for word in transcript.words]
    assert starts == sorted(starts)
    assert all(word.start_s <= word.end_s <= speech.audio.duration_s + 0.1 for word in transcript.words)


@pytest.mark.models
def test_without_word_timings_only_the_text_comes_back(
    transcriber: WhisperTranscriber, synthesizer: PiperSynthesizer
) -> None:
    transcript = transcriber.transcribe(synthesizer.synthesize("Good morning.").audio)

    assert normalized_words(transcript.text) == ["good", "morning"]
    assert transcript.words == ()


@pytest.mark.models
def test_no_audio_is_no_text(transcriber: WhisperTranscriber) -> None:
    assert transcriber.transcribe(AudioBlock(np.zeros(0, dtype=np.float32), ENGINE_RATE)).text == ""


@pytest.mark.models
def test_audio_off_the_engine_clock_is_refused(transcriber: WhisperTranscriber) -> None:
    with pytest.raises(AudioError, match="16000 Hz"):
        transcriber.transcribe(AudioBlock(np.zeros(4410, dtype=np.float32), 44_100))


def test_transcribing_a_missing_file_is_a_one_line_error(tmp_path: Path, capsys: Capture) -> None:
    assert main(["transcribe", str(tmp_path / "missing.wav")]) == 1

    assert capsys.readouterr().err == f"voice: error: {tmp_path / 'missing.wav'}: no such file\n"


def test_a_missing_whisper_model_is_a_one_line_error(tmp_path: Path, capsys: Capture) -> None:
    wav, nowhere = tmp_path / "silence.wav", tmp_path / "nowhere"
    write_wav(wav, AudioBlock(np.zeros(1600, dtype=np.float32), ENGINE_RATE))

    assert main(["transcribe", str(wav), "--asr-model", str(nowhere)]) == 1

    assert capsys.readouterr().err.startswith(f"voice: error: cannot load whisper model {nowhere}: ")
