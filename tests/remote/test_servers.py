"""Each remote backend against a real server of its protocol, from the registry, on loopback and offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.word_error import words_wrong
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.cli import main
from voice.errors import VoiceError
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import SpeechServerError
from voice.remote.limits import Limits
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.loopback import free_port
from voice.testing.speech_servers import running, wyoming_piper_command
from voice.tts.estimate import LATE_S
from voice.tts.port import Synthesis

pytestmark = pytest.mark.models

SAID = "What will the weather be like tomorrow?"
TWO_SENTENCES = "The weather is fine today. Please turn on the **kitchen** lights in the evening."


def check_spans(synthesis: Synthesis, text: str) -> None:
    """One estimated span per word, in order, inside the audio, each of some length."""
    assert synthesis.estimated
    assert [timing.text for timing in synthesis.words] == text.split()
    ends = 0
    for timing in synthesis.words:
        assert ends <= timing.start < timing.end <= synthesis.audio.frames
        ends = timing.end


def sentence_gap(synthesis: Synthesis) -> tuple[int, int]:
    """Where the first sentence's last word ends and the second's first word starts."""
    words = list(synthesis.words)
    last = next(index for index, timing in enumerate(words) if timing.text.endswith("."))
    return words[last].end, words[last + 1].start


@pytest.mark.parametrize("server", ["wyoming_whisper", "whisper_http"])
def test_a_remote_transcriber_hears_an_utterance(server: str, request: pytest.FixtureRequest) -> None:
    with transcriber_for(request.getfixturevalue(server)) as transcriber:
        heard = transcriber.transcribe(read_wav("audio/what-weather.wav"))

    assert words_wrong(SAID, heard.text) <= 1, heard.text


@pytest.mark.parametrize("server", ["wyoming_piper", "piper_http"])
def test_a_remote_voice_speaks_with_a_span_for_every_word(
    server: str, request: pytest.FixtureRequest, transcriber: WhisperTranscriber
) -> None:
    with synthesizer_for(request.getfixturevalue(server)) as synthesizer:
        synthesis = synthesizer.synthesize(TWO_SENTENCES)

    assert synthesis.audio.rate == ENGINE_RATE
    assert 3.0 < synthesis.audio.frames / ENGINE_RATE < 9.0  # at 22050 read as 24000 it would be off by 9 %
    check_spans(synthesis, TWO_SENTENCES)
    heard = transcriber.transcribe(synthesis.audio, word_timings=True).text  # the full window: both sentences
    assert words_wrong(TWO_SENTENCES.replace("**", ""), heard) <= 2, heard


def test_wyoming_sentence_streaming_puts_each_sentence_in_its_own_audio(wyoming_piper: str) -> None:
    with synthesizer_for(wyoming_piper) as synthesizer:
        synthesis = synthesizer.synthesize(TWO_SENTENCES)

    first_ends, second_starts = sentence_gap(synthesis)
    # The second sentence's words are spread over its own segment: they start (LATE_S late, as every
    # estimated span) after piper's silence between the segments, where a whole-audio estimate would
    # start them at the pause weight.
    sounds_at = second_starts - round(LATE_S * ENGINE_RATE)
    between = synthesis.audio.samples[first_ends:sounds_at]
    assert sounds_at - first_ends > 0.1 * ENGINE_RATE, (first_ends, second_starts)
    assert float(abs(between).max()) < 0.05


def test_remote_asr_and_tts_round_trip(wyoming_whisper: str, wyoming_piper: str) -> None:
    with synthesizer_for(wyoming_piper) as synthesizer, transcriber_for(wyoming_whisper) as transcriber:
        spoken = synthesizer.synthesize("Please turn on the kitchen lights.")
        heard = transcriber.transcribe(AudioBlock(spoken.audio.samples, ENGINE_RATE))

    assert words_wrong("Please turn on the kitchen lights.", heard.text) <= 1, heard.text


def test_a_voice_server_that_goes_down_fails_the_call_and_serves_again_once_back(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    port, home = free_port(), tmp_path_factory.mktemp("piper-down")
    synthesizer = synthesizer_for(f"wyoming://127.0.0.1:{port}", limits=Limits(connect_timeout_s=2.0))
    with running(wyoming_piper_command(port, home), port, home / "first.log"):
        assert synthesizer.synthesize("Hello.").audio.frames > 0

    with pytest.raises(SpeechServerError) as down:
        synthesizer.synthesize("Hello.")
    assert down.value.code is ErrorCode.TRANSPORT
    assert down.value.dispatch is Dispatch.NOT_SENT
    assert isinstance(down.value, VoiceError)

    with running(wyoming_piper_command(port, home), port, home / "second.log"):
        assert synthesizer.synthesize("I am back.").audio.frames > 0


@pytest.mark.parametrize("server", ["wyoming_piper", "piper_http"])
def test_voice_say_and_transcribe_use_the_configured_servers(
    server: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`voice say` speaks with the server the flags name, and `voice transcribe` hears it with another."""
    wav = tmp_path / "said.wav"
    assert main(["say", SAID, "--out", str(wav), "--tts", request.getfixturevalue(server), "--words"]) == 0
    spans = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in spans] == SAID.split()

    asr = request.getfixturevalue("wyoming_whisper")
    assert main(["transcribe", str(wav), "--asr", asr]) == 0
    assert words_wrong(SAID, capsys.readouterr().out) <= 1
