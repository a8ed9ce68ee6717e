"""With the real whisper: a word said twice that loops the cut window is not used as heard, and an
answer to the assistant's question is heard in the question's words (audio/hearing/README.md)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tests.support.word_error import same_but_one_word
from voice.asr.guard import UnusableTranscript, WordGuard, guarded, words_of
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import DEFAULT_BARGE_IN, VoiceActivityDetector, VoicePaused
from voice.audio.wav import read_wav
from voice.components import SpeechModels, assistant_ears, load_speech_models, quiet_vad
from voice.engine.hold import Eagerness
from voice.engine.transcripts import ends_a_sentence
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.speech_backends import SpeechChoice
from voice.tts.piper_voice import PiperSynthesizer
from voice.turn_end.smart_turn import SmartTurn

AUDIO = Path(__file__).resolve().parents[2] / "audio"
FIVE_FIVE = read_wav(AUDIO / "hearing" / "five-five.wav")
HEARTS = read_wav(AUDIO / "hearing" / "hearts.wav")
BLOCK = ENGINE_RATE // 50


@pytest.fixture(scope="module")
def greedy() -> WhisperTranscriber:
    """Whisper choosing its words greedily, as it did before its beam: it mishears "Hearts" alone."""
    return WhisperTranscriber(WhisperSettings(beam_size=1))


@pytest.mark.models
def test_five_five_that_loops_the_cut_window_is_heard_as_two_words(
    transcriber: WhisperTranscriber, greedy: WhisperTranscriber
) -> None:
    assert len(words_of(greedy.transcribe(FIVE_FIVE).text)) > 4  # the failure: "5" a dozen times
    assert len(words_of(transcriber.transcribe(FIVE_FIVE).text)) > 2  # the beam's words loop too, less
    assert words_of(guarded(transcriber).transcribe(FIVE_FIVE).text) == ["5", "5"]


@pytest.mark.models
def test_with_no_full_window_to_ask_the_loop_is_dropped(transcriber: WhisperTranscriber) -> None:
    with pytest.raises(UnusableTranscript, match="repeats '5'"):
        WordGuard(transcriber).transcribe(FIVE_FIVE)  # as for a remote server


@pytest.mark.models
def test_an_answer_is_heard_in_the_words_of_the_question(
    transcriber: WhisperTranscriber, greedy: WhisperTranscriber
) -> None:
    assert "hearts" not in words_of(greedy.transcribe(HEARTS).text)  # the beam's words hear it alone too
    assert words_of(greedy.transcribe(HEARTS, context="Shuffled. Pick a card.").text) == ["hearts"]
    assert words_of(transcriber.transcribe(HEARTS, context="Shuffled. Pick a card.").text) == ["hearts"]


@pytest.mark.models
def test_under_high_eagerness_the_words_are_chosen_greedily() -> None:
    """``high`` answers as soon as the words are in, so it does without the beam's 40-80 ms."""
    greedy_ears = load_speech_models(SpeechChoice(asr_greedy=True)).transcriber
    beam_ears = load_speech_models(SpeechChoice()).transcriber
    assert "hearts" not in words_of(greedy_ears.transcribe(HEARTS).text)
    assert words_of(beam_ears.transcribe(HEARTS).text) == ["hearts"]


def comma_pause_of_sorry_sunday() -> AudioBlock:
    """ "Sorry, I meant on Sunday." up to its comma pause, as the VAD offers it under eagerness high."""
    said = read_wav(AUDIO / "sorry-sunday.wav").samples
    signal = np.concatenate([np.zeros(ENGINE_RATE // 2, np.float32), said, np.zeros(ENGINE_RATE, np.float32)])
    vad = VoiceActivityDetector(quiet_vad(Eagerness.HIGH), DEFAULT_BARGE_IN)
    for start in range(0, len(signal), BLOCK):
        for event in vad.process(AudioBlock(signal[start : start + BLOCK], ENGINE_RATE, start), False):
            if isinstance(event, VoicePaused):
                return event.utterance
    raise AssertionError("the VAD offered no pause")


@pytest.mark.models
def test_a_prompt_never_ends_the_sentence_at_a_pause(transcriber: WhisperTranscriber) -> None:
    """Prompted with "Pick a card.", whisper writes "Sorry." with a full stop at the comma pause, and the
    end-of-turn rule would answer into it; the transcript ends as the unprompted one does."""
    paused = comma_pause_of_sorry_sunday()
    own_ending = WhisperTranscriber(WhisperSettings(unprompted_ending=False))
    assert own_ending.transcribe(paused, context="Pick a card.").text == "Sorry."  # the failure
    assert not ends_a_sentence(transcriber.transcribe(paused).text)
    heard = transcriber.transcribe(paused, context="Pick a card.").text
    assert words_of(heard) == ["sorry"]
    assert not ends_a_sentence(heard)


@pytest.mark.models
def test_after_pick_a_card_the_room_hears_the_card(
    greedy: WhisperTranscriber, synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    """The whole pipeline with ``[asr] context`` on: the assistant says "Pick a card.", the user answers;
    the engine hands the heard question to whisper, and the next request carries the card. Off (the
    default), whisper hears the answer alone."""
    scenario = tmp_path / "card.json"
    scenario.write_text(
        '{"version": 1, "llm": {"replies": ["Pick a card.", "Hearts it is."]},'
        f' "user": [{{"wav": "{AUDIO / "what-weather.wav"}", "at_s": 0.5}},'
        f' {{"wav": "{AUDIO / "hearing" / "hearts.wav"}", "at_s": 6.0}}], "end_s": 12}}'
    )
    heard = {}
    with_context, without = assistant_ears(greedy, context=True), assistant_ears(greedy)
    for name, ears in (("with", with_context), ("without", without)):
        report = run_scenario(
            load_scenario(scenario),
            Path(tempfile.mkdtemp(dir=tmp_path)),
            models=SpeechModels(ears, synthesizer, SmartTurn()),
        )
        heard[name] = [speech["transcript"] for speech in report["user_speech"]]
    # whisper's words differ by CPU kernels: one word may be heard as another
    assert same_but_one_word(heard["with"][0], "What will the weather be like tomorrow?")
    assert words_of(heard["with"][1]) == ["hearts"]
    assert heard["without"][1] != "Hearts."
