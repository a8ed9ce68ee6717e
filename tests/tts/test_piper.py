"""Piper speaks chunks reproducibly, and its word spans match what a listener hears up to any sample."""

from __future__ import annotations

import difflib
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from tests.support.word_error import normalized_words
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cli import main
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.errors import ModelError
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer
from voice.tts.port import Synthesis

AWKWARD = "Dr. Smith paid $3.50 at 10:30 a.m., e.g. for tea. It is in the house of the king — fine."
# Plain words, so whisper's spelling of what it hears can be compared with the text word for word.
SENTENCES = [
    "Tomorrow starts dry, then rain moves in from the west by noon.",
    "The library opens at nine and closes early on Sundays during the summer.",
    "Please remember to water the plants and feed the cat before you leave.",
    "Our train was delayed, so we walked along the river to the old market.",
]
CUTS_PER_SENTENCE = 20


def ledger_for(text: str, synthesis: Synthesis) -> PlaybackLedger:
    """A ledger holding one chunk as the engine would enter it: the text, then the chunk's word spans."""
    ledger = PlaybackLedger()
    ledger.add_text(text)
    ledger.close_text()
    ledger.place([SampleSpan(word.start, word.end) for word in synthesis.words])
    return ledger


def words_reached(reference: list[str], heard: list[str]) -> int:
    """How far into ``reference`` a transcript gets: one past the last reference word it matches."""
    matcher = difflib.SequenceMatcher(a=reference, b=heard, autojunk=False)
    return max((block.a + block.size for block in matcher.get_matching_blocks() if block.size), default=0)


@pytest.mark.models
def test_the_same_text_gives_the_same_audio_and_spans(synthesizer: PiperSynthesizer) -> None:
    first = synthesizer.synthesize(SENTENCES[0])
    second = synthesizer.synthesize(SENTENCES[0])

    assert first.audio.samples.tobytes() == second.audio.samples.tobytes()
    assert first.words == second.words


@pytest.mark.models
def test_each_word_of_awkward_text_gets_one_ordered_span_in_the_audio(synthesizer: PiperSynthesizer) -> None:
    synthesis = synthesizer.synthesize(AWKWARD)

    assert synthesis.audio.rate == ENGINE_RATE
    assert synthesis.audio.channels == 1
    assert synthesis.audio.samples.dtype == np.float32
    assert synthesis.audio.start == 0
    assert not synthesis.estimated
    assert [word.text for word in synthesis.words] == AWKWARD.split()
    spans = [(word.start, word.end) for word in synthesis.words]
    assert all(0 <= start <= end <= synthesis.audio.frames for start, end in spans)
    assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(spans))
    # "$3.50" is read as five words ("dollar three point five zero"): far longer than "paid" or "at".
    paid, amount, at = (end - start for start, end in spans[2:5])
    assert amount > 3 * max(paid, at)


@pytest.mark.models
def test_heard_text_at_a_random_cut_matches_what_whisper_hears_there(
    synthesizer: PiperSynthesizer, transcriber: WhisperTranscriber
) -> None:
    agreements: list[bool] = []
    disagreements: list[str] = []
    for seed, sentence in enumerate(SENTENCES):
        synthesis = synthesizer.synthesize(sentence)
        ledger = ledger_for(sentence, synthesis)
        reference = normalized_words(sentence)
        cuts = random.Random(seed).sample(range(synthesis.audio.frames + 1), CUTS_PER_SENTENCE)
        for cut in cuts:
            heard = normalized_words(ledger.heard(cut))
            before_cut = AudioBlock(synthesis.audio.samples[:cut], ENGINE_RATE)
            transcript = transcriber.transcribe(before_cut, word_timings=True)
            # Whisper may or may not write out a word the cut went through: one word either way agrees.
            whisper_words = normalized_words(" ".join(word.text for word in transcript.words))
            agrees = abs(words_reached(reference, whisper_words) - len(heard)) <= 1
            agreements.append(agrees)
            if not agrees:
                disagreements.append(f"{cut / ENGINE_RATE:.2f}s ledger={heard} whisper={whisper_words}")

    assert len(agreements) == len(SENTENCES) * CUTS_PER_SENTENCE
    assert sum(agreements) >= 0.9 * len(agreements), disagreements


@pytest.mark.models
def test_a_voice_without_alignments_gets_estimated_spans_close_to_the_aligned_ones(
    synthesizer: PiperSynthesizer,
) -> None:
    estimating = PiperSynthesizer(PiperSettings(word_alignments=False))

    aligned = synthesizer.synthesize(SENTENCES[0])
    estimated = estimating.synthesize(SENTENCES[0])

    # A second load of the voice, unpatched, still speaks byte for byte the same.
    assert estimated.audio.samples.tobytes() == aligned.audio.samples.tobytes()
    assert estimated.estimated
    assert [word.text for word in estimated.words] == SENTENCES[0].split()
    drift_s = [abs(e.end - a.end) / ENGINE_RATE for e, a in zip(estimated.words, aligned.words, strict=True)]
    assert max(drift_s) < 0.4


@pytest.mark.models
def test_say_writes_a_wav_and_lists_word_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wav = tmp_path / "hello.wav"

    assert main(["say", "Hello there, friend.", "--out", str(wav), "--words"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in lines] == ["Hello", "there,", "friend."]
    assert wav.stat().st_size > 44 + 2 * ENGINE_RATE // 2  # a header and at least half a second of speech


def test_saying_nothing_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["say", "  ", "--out", str(tmp_path / "out.wav")]) == 1

    assert capsys.readouterr().err == "voice: error: nothing to say: the text is empty\n"


def test_a_missing_voice_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="piper voice not found"):
        PiperSynthesizer(PiperSettings(model=tmp_path / "nobody.onnx"))


def test_an_unreadable_voice_is_a_model_error(tmp_path: Path) -> None:
    voice = tmp_path / "broken.onnx"
    voice.write_bytes(b"not a model")
    Path(f"{voice}.json").write_text("{}")

    with pytest.raises(ModelError, match="cannot load piper voice"):
        PiperSynthesizer(PiperSettings(model=voice))


@pytest.mark.models
def test_markdown_a_model_slips_in_is_silent_but_keeps_its_word_timings(
    synthesizer: PiperSynthesizer,
) -> None:
    marked = synthesizer.synthesize("## Weather: it is **really** sunny.")
    plain = synthesizer.synthesize("Weather: it is really sunny.")

    assert marked.audio.frames == plain.audio.frames  # nothing extra is read out
    assert [w.text for w in marked.words] == ["##", "Weather:", "it", "is", "**really**", "sunny."]
    assert marked.words[0].start == marked.words[0].end  # the heading mark takes no time
    assert [(w.start, w.end) for w in marked.words[1:]] == [(w.start, w.end) for w in plain.words]
    assert [w.start for w in synthesizer.synthesize("** --").words] == [0, 0]


@pytest.mark.models
def test_the_voice_runs_without_memory_arenas_so_long_replies_do_not_grow_it(
    synthesizer: PiperSynthesizer,
) -> None:
    """onnxruntime's CPU arena and per-shape memory plans keep what the longest reply needed, for good:
    a kiosk speaking for weeks grew by megabytes a turn with them on."""
    options = synthesizer._voice.session.get_session_options()

    assert not options.enable_cpu_mem_arena
    assert not options.enable_mem_pattern
