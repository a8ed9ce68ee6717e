"""The recorded-audio fixtures and scenarios in ``audio/``.

The manifest must describe the audio truthfully (its speech times are checked against webrtcvad, a
measurement independent of the energy threshold that wrote them), and every scenario must follow the
simulation contract of docs/architecture.md §4 so ``voice simulate`` can run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import webrtcvad

AUDIO = Path(__file__).resolve().parent.parent / "audio"
MANIFEST: dict[str, Any] = json.loads((AUDIO / "manifest.json").read_text())
FIXTURES: list[dict[str, Any]] = MANIFEST["fixtures"]
BY_FILE = {fixture["file"]: fixture for fixture in FIXTURES}
SPEECH = [fixture for fixture in FIXTURES if fixture["kind"] == "speech"]
SCENARIOS = sorted((AUDIO / "scenarios").glob("*.json"))
RATE = 16_000
TOLERANCE_S = 0.05
VAD_FRAME = 320  # 20 ms at 16 kHz
MIN_PAUSE_S = 0.3


def read_pcm(path: Path) -> npt.NDArray[np.int16]:
    with wave.open(str(path)) as wav:
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")


def voiced_onsets_s(pcm: npt.NDArray[np.int16]) -> list[float]:
    """Where webrtcvad hears speech begin, after the start or after at least MIN_PAUSE_S without speech."""
    vad = webrtcvad.Vad(2)
    data = np.ascontiguousarray(pcm).tobytes()
    step = VAD_FRAME * 2
    voiced = [vad.is_speech(data[at : at + step], RATE) for at in range(0, len(data) - step + 1, step)]
    onsets: list[float] = []
    quiet_frames = len(voiced)  # leading silence counts as a pause of any length
    for index, is_speech in enumerate(voiced):
        if is_speech and quiet_frames * VAD_FRAME / RATE >= MIN_PAUSE_S:
            onsets.append(index * VAD_FRAME / RATE)
        quiet_frames = 0 if is_speech else quiet_frames + 1
    return onsets


def speech_edges_s(pcm: npt.NDArray[np.int16]) -> tuple[list[float], list[float]]:
    """Speech onsets, and speech ends found as onsets of the time-reversed audio.

    Reversing the audio turns the VAD's hangover after speech into a lag before it, which matches
    the small onset lag, so both edges land within a frame of the true ones.
    """
    duration = len(pcm) / RATE
    ends = sorted(duration - onset for onset in voiced_onsets_s(pcm[::-1]))
    return voiced_onsets_s(pcm), ends


def test_manifest_lists_every_wav_in_audio() -> None:
    assert set(BY_FILE) == {path.name for path in AUDIO.glob("*.wav")}
    assert len(BY_FILE) == len(FIXTURES), "a file is listed twice"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda fixture: fixture["file"])
def test_fixture_is_16k_mono_16bit_and_as_long_as_listed(fixture: dict[str, Any]) -> None:
    with wave.open(str(AUDIO / fixture["file"])) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16_000, 1, 2)
        assert wav.getnframes() / RATE == pytest.approx(fixture["duration_s"], abs=0.001)
    assert fixture["kind"] in {"speech", "noise", "sound"}
    assert (fixture["text"] != "") == (fixture["kind"] == "speech")


def test_fixtures_stay_small() -> None:
    assert sum((AUDIO / fixture["file"]).stat().st_size for fixture in FIXTURES) < 3_000_000


@pytest.mark.parametrize("fixture", SPEECH, ids=lambda fixture: fixture["file"])
def test_speech_times_match_a_vad_measurement(fixture: dict[str, Any]) -> None:
    onsets, ends = speech_edges_s(read_pcm(AUDIO / fixture["file"]))
    listed_onsets = [fixture["start_s"]] + [pause["end_s"] for pause in fixture["pauses"]]
    listed_ends = [pause["start_s"] for pause in fixture["pauses"]] + [fixture["end_s"]]
    assert onsets == pytest.approx(listed_onsets, abs=TOLERANCE_S)
    assert ends == pytest.approx(listed_ends, abs=TOLERANCE_S)


@pytest.mark.parametrize("fixture", SPEECH, ids=lambda fixture: fixture["file"])
def test_speech_is_framed_by_silence(fixture: dict[str, Any]) -> None:
    assert 0.2 - TOLERANCE_S <= fixture["start_s"] <= 0.4 + TOLERANCE_S
    assert fixture["duration_s"] - fixture["end_s"] >= 0.2 - TOLERANCE_S


def test_the_mid_sentence_pause_is_shorter_than_endpointing() -> None:
    paused = [fixture for fixture in SPEECH if fixture["pauses"]]
    assert paused, "no fixture has a speaker pausing mid-sentence"
    for fixture in paused:
        for pause in fixture["pauses"]:
            assert 0.4 <= pause["end_s"] - pause["start_s"] <= 0.7, fixture["file"]


@pytest.mark.parametrize(
    "fixture", [fixture for fixture in FIXTURES if fixture["kind"] == "sound"], ids=lambda f: f["file"]
)
def test_sound_lies_where_the_manifest_says(fixture: dict[str, Any]) -> None:
    pcm = read_pcm(AUDIO / fixture["file"]).astype(np.float64)
    loud = np.flatnonzero(np.abs(pcm) >= np.max(np.abs(pcm)) / 100)  # within 40 dB of the peak
    assert loud[0] / RATE == pytest.approx(fixture["start_s"], abs=TOLERANCE_S)
    assert (loud[-1] + 1) / RATE == pytest.approx(fixture["end_s"], abs=TOLERANCE_S)


# -- scenarios ------------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    scenario: dict[str, Any] = json.loads(path.read_text())
    return scenario


def fixture_for(scenario_path: Path, wav: str) -> dict[str, Any]:
    """The manifest entry of a WAV named relative to the scenario file (docs/architecture.md §4)."""
    resolved = (scenario_path.parent / wav).resolve()
    assert resolved.is_file(), f"{wav} does not resolve from {scenario_path.name}"
    assert resolved.parent == AUDIO, f"{wav} is not one of the fixtures"
    return BY_FILE[resolved.name]


def replies_of(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"text": reply} if isinstance(reply, str) else reply for reply in scenario["llm"]["replies"]]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_scenario_scripts_an_llm(path: Path) -> None:
    scenario = load(path)
    assert scenario["version"] == 1
    llm = scenario["llm"]
    assert isinstance(llm["first_delta_ms"], int)
    assert llm["first_delta_ms"] >= 0
    assert isinstance(llm["delta_ms"], int)
    assert llm["delta_ms"] >= 0
    replies = replies_of(scenario)
    assert replies
    for reply in replies:
        assert set(reply) <= {"text", "tool_calls", "fail", "after_ms"}
        if "fail" in reply:  # a failing reply may fail before any text
            assert reply.get("after_ms", 0) >= 0
        else:
            assert isinstance(reply["text"], str)
            assert reply["text"].strip()
        for call in reply.get("tool_calls", []):
            answered = call["name"] in llm.get("tools", {}) or "mcp" in scenario  # MCP servers run the rest
            assert answered, f"no scripted result for tool {call['name']}"
            assert isinstance(call["arguments"], dict)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_scenario_user_entries_resolve_and_are_timed(path: Path) -> None:
    scenario = load(path)
    replies = replies_of(scenario)
    assert scenario["user"]
    for entry in scenario["user"]:
        typed = "text" in entry
        what = {"text", "id"} if typed else {"wav"}
        duration = 0.0 if typed else fixture_for(path, entry["wav"])["duration_s"]
        if "at_s" in entry:
            assert set(entry) == what | {"at_s"}
            assert entry["at_s"] >= 0
            assert entry["at_s"] + duration <= scenario["end_s"]
        else:
            assert set(entry) == what | {"during_reply", "after_ms"}
            assert 1 <= entry["during_reply"] <= len(replies)
            assert isinstance(entry["after_ms"], int)
            assert entry["after_ms"] >= 0


@pytest.mark.parametrize("path", [p for p in SCENARIOS if "room" in load(p)], ids=lambda path: path.stem)
def test_scenario_room_names_a_noise_bed(path: Path) -> None:
    room = load(path)["room"]
    assert set(room) <= {"echo_gain_db", "echo_delay_ms", "noise", "drift_ppm", "dropped_blocks"}
    assert room["echo_gain_db"] <= 0
    assert room["echo_delay_ms"] >= 0
    assert fixture_for(path, room["noise"]["wav"])["kind"] == "noise"
    assert room["noise"]["gain_db"] < 0


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_scenario_expectation_is_consistent(path: Path) -> None:
    scenario = load(path)
    expect = scenario["fixture_expect"]
    turns = expect["turns"]
    assert len(turns) == expect["requests"] <= len(scenario["llm"]["replies"])
    assert sum(turn["interrupted"] for turn in turns) == expect["interruptions"]
    assert all(turn["heard"] in {"all", "some", "none"} for turn in turns)
    answered = [turn for turn in turns if "error" not in turn]  # a failure is not an interruption
    assert all(turn["interrupted"] == (turn["heard"] != "all") for turn in answered)
    assert not any(turn["interrupted"] for turn in turns if "error" in turn)
    assert expect["merged"] == any(turn["heard"] == "none" or "error" in turn for turn in turns)


@pytest.mark.parametrize(
    "path",
    [p for p in SCENARIOS if load(p)["fixture_expect"]["interruptions"]],
    ids=lambda path: path.stem,
)
def test_cut_in_speech_starts_while_the_reply_plays(path: Path) -> None:
    """The user's speech (not just the file) must begin before the reply it cuts would have ended."""
    scenario = load(path)
    reply_audio_s = scenario["fixture_expect"]["reply_audio_s"]
    for entry in scenario["user"]:
        if "during_reply" in entry and "wav" in entry:
            onset_s = entry["after_ms"] / 1000 + fixture_for(path, entry["wav"])["start_s"]
            assert onset_s < reply_audio_s[entry["during_reply"] - 1] - 0.5


@pytest.mark.slow
@pytest.mark.models
@pytest.mark.processes
def test_the_fixture_maker_regenerates_what_is_committed(tmp_path: Path) -> None:
    """``audio/make_fixtures.py`` run in a scratch folder rebuilds the committed audio and its manifest.

    espeak-ng's fixtures and the manifest come out byte for byte. Piper's differ in the
    last bit or two of a few samples from one ONNX Runtime CPU kernel to another, so those are compared
    sample by sample.
    """
    scratch = tmp_path / "audio"
    scratch.mkdir()
    shutil.copy(AUDIO / "make_fixtures.py", scratch)
    repo = AUDIO.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    subprocess.run([sys.executable, str(scratch / "make_fixtures.py")], check=True, env=env, timeout=600)
    made = sorted(p.relative_to(scratch) for p in scratch.rglob("*") if p.is_file() and p.suffix != ".py")
    # Every WAV comes from the maker, and nothing else but the manifest: the scenarios are written by hand.
    assert set(made) == {p.relative_to(AUDIO) for p in AUDIO.glob("*.wav")} | {Path("manifest.json")}
    piper = {f"{fixture['file']}" for fixture in FIXTURES if fixture["voice"].startswith("piper")}
    assert piper, "some fixtures are spoken by piper"
    for name in made:
        new, old = (scratch / name).read_bytes(), (AUDIO / name).read_bytes()
        if str(name) in piper:
            new_pcm, old_pcm = read_pcm(scratch / name), read_pcm(AUDIO / name)
            assert len(new_pcm) == len(old_pcm), name
            difference = np.abs(new_pcm.astype(np.int32) - old_pcm.astype(np.int32))
            assert difference.max() <= 4, name
            assert np.mean(difference > 0) < 0.05, name
        else:
            assert new == old, f"{name} changed"
