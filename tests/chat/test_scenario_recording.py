"""A conversation followed as `voice chat --record-scenario` follows it (its stream, its log, the blocks the
engine heard) becomes a scenario: each utterance a WAV where it was said, the replies scripted, and how
each reply ended as its expectations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.chat.scenario_recording import POST_S, PRE_S, ScenarioRecording
from voice.conversation.log_records import InputReceived, TurnEnded, TurnStarted
from voice.engine.hold import Eagerness
from voice.errors import ConfigError
from voice.recorder import Recorder
from voice.sim.scenario import load_scenario

BLOCK = 640


def a_cut_in_conversation(recorder: Recorder) -> None:
    """The user asks, cuts in at 3.0 s while reply 1 plays (from 2.0 s), and reply 2 plays in full."""
    see, note = recorder.see, recorder.note
    see({"type": "input.speech_started", "t": 0.5})
    see({"type": "input.speech_stopped", "t": 1.5})
    see({"type": "input.transcript", "id": "speech-1", "text": "What's the weather?"})
    note(InputReceived("What's the weather?", "speech-1"))
    note(TurnStarted(1))
    see({"type": "response.created", "turn": 1})
    see({"type": "state", "state": "speaking"})
    see({"type": "output_audio.started", "turn": 1, "t": 2.0})
    see({"type": "input.speech_started", "t": 3.0})
    see({"type": "response.interrupted", "turn": 1, "heard": "Tomorrow starts"})
    see({"type": "output_audio.stopped", "turn": 1, "t": 3.1})
    note(TurnEnded(1, cancelled=True, generated="Tomorrow starts dry, then wet.", heard="Tomorrow starts"))
    see({"type": "input.speech_stopped", "t": 4.0})
    see({"type": "input.transcript", "id": "speech-2", "text": "Sorry, Sunday."})
    note(InputReceived("Sorry, Sunday.", "speech-2"))
    note(TurnStarted(2))
    see({"type": "response.created", "turn": 2})
    see({"type": "output_audio.started", "turn": 2, "t": 5.0})
    see({"type": "response.done", "turn": 2, "text": "On Sunday it is dry.", "metrics": {}})
    see({"type": "output_audio.stopped", "turn": 2, "t": 6.5})
    note(TurnEnded(2, cancelled=False, generated="On Sunday it is dry."))


def ramp_blocks(seconds: float) -> list[AudioBlock]:
    """Blocks whose every sample says where it is on the clock (its time / 10), so a clip shows its span."""
    total = round(seconds * ENGINE_RATE)
    clock = (np.arange(total, dtype=np.float32) / ENGINE_RATE / 10).astype(np.float32)
    return [AudioBlock(clock[i : i + BLOCK], ENGINE_RATE, i) for i in range(0, total, BLOCK)]


def test_a_cut_in_becomes_a_scenario_that_loads_with_its_words_cues_replies_and_how_it_ended(
    tmp_path: Path,
) -> None:
    recorder = Recorder()
    recording = ScenarioRecording(tmp_path / "went-wrong.json", recorder, Eagerness.HIGH)
    a_cut_in_conversation(recorder)
    for block in ramp_blocks(8.0):
        recording.hear(block)
    path = recording.write()

    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["llm"] == {"replies": ["Tomorrow starts dry, then wet.", "On Sunday it is dry."]}
    assert data["user"] == [
        {"wav": "went-wrong-audio/utterance-1.wav", "at_s": 0.2},  # where its audio (and the onset) began
        {"wav": "went-wrong-audio/utterance-2.wav", "during_reply": 1, "after_ms": 700},
    ]
    assert data["turn"] == {"eagerness": "high"}
    assert data["expect"] == [
        {"cut": 1, "by": 2},
        {"heard_prefix": 1, "within_words": 1},
        {"request": 2, "carries": "interrupted"},
        {"completed": 2},
    ]
    assert data["end_s"] == 11.0  # three seconds past the last audio
    for name, (start, end) in {"utterance-1.wav": (0.5, 1.5), "utterance-2.wav": (3.0, 4.0)}.items():
        clip = read_wav(tmp_path / "went-wrong-audio" / name)
        assert clip.frames == round((end - start + PRE_S + POST_S) * ENGINE_RATE)
        assert clip.samples[0] * 10 == pytest.approx(start - PRE_S, abs=1e-3)  # that span's audio
    scenario = load_scenario(path)  # a scenario `voice test` takes as it is
    assert [e.kind for e in scenario.expectations] == ["cut", "heard_prefix", "request", "completed"]


def test_an_utterance_still_going_when_the_chat_stops_is_kept_to_the_end_of_the_audio(tmp_path: Path) -> None:
    recorder = Recorder()
    recording = ScenarioRecording(tmp_path / "cut-short.json", recorder, Eagerness.AUTO)
    recorder.see({"type": "input.speech_started", "t": 1.0})
    for block in ramp_blocks(2.0):
        recording.hear(block)
    recording.write()

    clip = read_wav(tmp_path / "cut-short-audio" / "utterance-1.wav")
    assert clip.frames == round((2.0 - 1.0 + PRE_S) * ENGINE_RATE)


def test_an_utterance_is_kept_as_asr_heard_it_from_where_its_voice_began(tmp_path: Path) -> None:
    """Over a reply AEC3 mutes the start of a cut-in and the VAD finds it late; ASR reaches back to where
    the voice began. The clip is ASR's audio and its cue moves with it, so the replay hears those words."""
    recorder = Recorder()
    asked: list[tuple[int, int]] = []
    ramp = np.concatenate([b.samples for b in ramp_blocks(8.0)])

    def words_heard(onset: int, end: int) -> AudioBlock | None:
        asked.append((onset, end))
        began = (
            onset - round(0.7 * ENGINE_RATE)
            if onset > 2 * ENGINE_RATE
            else onset - round(PRE_S * ENGINE_RATE)
        )
        return AudioBlock(ramp[began:end] * -1, ENGINE_RATE, began)  # negated: not the engine's blocks

    recording = ScenarioRecording(tmp_path / "cut-in.json", recorder, Eagerness.AUTO, words_heard)
    a_cut_in_conversation(recorder)
    for block in ramp_blocks(8.0):
        recording.hear(block)
    path = recording.write()

    assert asked == [
        (round(0.5 * ENGINE_RATE), round(1.9 * ENGINE_RATE)),
        (3 * ENGINE_RATE, round(4.4 * ENGINE_RATE)),
    ]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["user"][1] == {"wav": "cut-in-audio/utterance-2.wav", "during_reply": 1, "after_ms": 300}
    clip = read_wav(tmp_path / "cut-in-audio" / "utterance-2.wav")
    assert clip.samples[0] * -10 == pytest.approx(2.3, abs=1e-3)  # from where ASR began it
    assert clip.frames == round((4.4 - 2.3) * ENGINE_RATE)


def test_a_cut_in_asr_heard_from_before_the_reply_began_is_kept_from_the_reply_on(tmp_path: Path) -> None:
    """While the canceller learns the room the reach back can take the echo's own start for the user's;
    before the reply there was no voice (the VAD found it over the reply), and the cue stays the reply's."""
    recorder = Recorder()
    ramp = np.concatenate([b.samples for b in ramp_blocks(8.0)])

    def words_heard(onset: int, end: int) -> AudioBlock | None:
        began = onset - round(1.2 * ENGINE_RATE)  # the cut-in's onset at 3.0 s, the reply's at 2.0 s
        return AudioBlock(ramp[began:end], ENGINE_RATE, began)

    recording = ScenarioRecording(tmp_path / "early.json", recorder, Eagerness.AUTO, words_heard)
    a_cut_in_conversation(recorder)
    for block in ramp_blocks(8.0):
        recording.hear(block)
    path = recording.write()

    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["user"][1] == {"wav": "early-audio/utterance-2.wav", "during_reply": 1, "after_ms": 0}
    assert read_wav(tmp_path / "early-audio" / "utterance-2.wav").samples[0] * 10 == pytest.approx(
        2.0, abs=1e-3
    )


def test_a_cut_in_whose_pre_roll_began_before_the_reply_is_kept_from_the_reply_on(tmp_path: Path) -> None:
    """A voice 0.1 s into the reply: its 0.3 s pre-roll began before it; the cue belongs to the reply."""
    recorder = Recorder()
    recording = ScenarioRecording(tmp_path / "soon.json", recorder, Eagerness.AUTO)
    see = recorder.see
    see({"type": "response.created", "turn": 1})
    see({"type": "state", "state": "speaking"})
    see({"type": "output_audio.started", "turn": 1, "t": 2.0})
    see({"type": "input.speech_started", "t": 2.1})
    see({"type": "input.speech_stopped", "t": 3.0})
    for block in ramp_blocks(5.0):
        recording.hear(block)
    path = recording.write()

    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["user"] == [{"wav": "soon-audio/utterance-1.wav", "during_reply": 1, "after_ms": 0}]
    clip = read_wav(tmp_path / "soon-audio" / "utterance-1.wav")
    assert clip.samples[0] * 10 == pytest.approx(2.0, abs=1e-3)
    assert clip.frames == round((3.0 + POST_S - 2.0) * ENGINE_RATE)


@pytest.mark.parametrize(
    ("name", "error"),
    [("scenario.txt", "a scenario file ends in .json"), ("missing/scenario.json", "no such folder")],
)
def test_a_scenario_path_it_cannot_write_is_one_line(tmp_path: Path, name: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        ScenarioRecording(tmp_path / name, Recorder(), Eagerness.AUTO)
