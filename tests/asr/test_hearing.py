"""With the real whisper: a word said twice that loops the cut window is not used as heard, and an
answer to the assistant's question is heard in the question's words (audio/hearing/README.md)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from voice.asr.guard import UnusableTranscript, WordGuard, guarded, words_of
from voice.asr.port import Transcript
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import AudioBlock
from voice.audio.wav import read_wav
from voice.cancel import CancelToken
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer
from voice.turn_end.smart_turn import SmartTurn

AUDIO = Path(__file__).resolve().parents[2] / "audio"
FIVE_FIVE = read_wav(AUDIO / "hearing" / "five-five.wav")
HEARTS = read_wav(AUDIO / "hearing" / "hearts.wav")


@pytest.mark.models
def test_five_five_that_loops_the_cut_window_is_heard_as_two_words(transcriber: WhisperTranscriber) -> None:
    looped = words_of(transcriber.transcribe(FIVE_FIVE).text)
    assert len(looped) > 4  # the failure: the cut window says "5" a dozen times
    assert words_of(guarded(transcriber).transcribe(FIVE_FIVE).text) == ["5", "5"]


@pytest.mark.models
def test_with_no_full_window_to_ask_the_loop_is_dropped(transcriber: WhisperTranscriber) -> None:
    with pytest.raises(UnusableTranscript, match="repeats '5'"):
        WordGuard(transcriber).transcribe(FIVE_FIVE)  # as for a remote server


@pytest.mark.models
def test_an_answer_is_heard_in_the_words_of_the_question(transcriber: WhisperTranscriber) -> None:
    assert "hearts" not in words_of(transcriber.transcribe(HEARTS).text)
    assert words_of(transcriber.transcribe(HEARTS, context="Shuffled. Pick a card.").text) == ["hearts"]


class WithoutContext:
    """Whisper as it was before context: the engine's context goes nowhere."""

    def __init__(self, inner: WhisperTranscriber) -> None:
        self._inner = inner

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        return self._inner.transcribe(audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel)


@pytest.mark.models
def test_after_pick_a_card_the_room_hears_the_card(
    transcriber: WhisperTranscriber, synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    """The whole pipeline: the assistant says "Pick a card.", the user answers; the engine hands the
    heard question to whisper, and the next request carries the card."""
    scenario = tmp_path / "card.json"
    scenario.write_text(
        '{"version": 1, "llm": {"replies": ["Pick a card.", "Hearts it is."]},'
        f' "user": [{{"wav": "{AUDIO / "what-weather.wav"}", "at_s": 0.5}},'
        f' {{"wav": "{AUDIO / "hearing" / "hearts.wav"}", "at_s": 6.0}}], "end_s": 12}}'
    )
    heard = {}
    for name, ears in (("with", guarded(transcriber)), ("without", WithoutContext(transcriber))):
        report = run_scenario(
            load_scenario(scenario),
            Path(tempfile.mkdtemp(dir=tmp_path)),
            models=SpeechModels(ears, synthesizer, SmartTurn()),
        )
        heard[name] = [speech["transcript"] for speech in report["user_speech"]]
    assert heard["with"] == ["What will the weather be like tomorrow?", "Hearts."]
    assert heard["without"][1] != "Hearts."
