"""`voice doctor`: the CPU, the models timed on the demo's question as the engine asks them, what each
eagerness gives on this machine, and warnings a user can act on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from voice.cli import main
from voice.engine.hold import Eagerness
from voice.telemetry.doctor import Measured, question_at_pause
from voice.telemetry.doctor_report import doctor_report, report_lines
from voice.telemetry.expected_turns import Costs, expected
from voice.telemetry.machine import parse_cpuinfo, this_cpu

EPYC = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse avx fma f16c avx2\n"


def voice(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voice", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_the_models_get_the_question_as_the_engine_offers_it_at_the_short_pause() -> None:
    auto, high = question_at_pause(Eagerness.AUTO), question_at_pause(Eagerness.HIGH)
    # the question's last word ends at 2.15 s (audio/manifest.json); the offer follows the pause after it
    assert 2.15 + 0.2 - 0.04 <= auto.start_s + auto.duration_s <= 2.15 + 0.2 + 0.06
    assert (auto.start_s + auto.duration_s) - (high.start_s + high.duration_s) == pytest.approx(
        0.1, abs=0.001
    )


def test_the_report_shows_each_eagerness_marks_the_users_and_says_every_warning() -> None:
    costs = Costs(300, 110, 330, 420, 250, "tiny.en (bundled)")
    measured = Measured(costs, "What will the winner be like tomorrow?", 0.834, "Tomorrow looks sunny,", 3)
    report = doctor_report(
        parse_cpuinfo(EPYC, "x86_64"),
        [1.0, 0.5, 0.2],
        {"asr": "tiny.en (bundled)", "tts": "piper"},
        measured,
        expected(costs),
        "auto",
    )
    lines = report_lines(report)
    assert lines[0].startswith("CPU: AMD EPYC 7B13, x86_64, 1 core: avx2 fma f16c (no avx512f")
    assert lines[1].startswith("load average: 1.0 0.5 0.2: more work than the cores can run")  # 1 on 1 core
    rows = {line.split()[0]: line for line in lines if line.startswith(("  low ", "  auto ", "  high "))}
    assert rows["auto"].split()[1:6] == ["no", "600", "ms", "850", "ms"]
    assert rows["auto"].endswith("<- yours")
    assert rows["high"].split()[1:3] == ["yes", "520"]
    assert "heard 'What will the winner be like tomorrow?'" in "\n".join(lines)  # what whisper made of it
    warned = [line.strip() for line in lines[lines.index("warnings:") + 1 :]]
    assert [line.split(":")[0] for line in warned] == ["auto", "high"]
    assert report["warnings"] == warned
    assert json.loads(json.dumps(report)) == report  # --json prints this very dict


@pytest.mark.slow
@pytest.mark.models
def test_voice_doctor_times_the_real_models_here_and_prints_json() -> None:
    done = voice("doctor", "--json", "--rounds", "1", "--eagerness", "high")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cpu"]["model"] == this_cpu().model
    assert report["configured_eagerness"] == "high"
    measured = report["measured"]
    assert "weather" in measured["heard"].lower()  # whisper heard the question it was timed on
    assert 0.0 <= measured["smart_turn_probability"] <= 1.0
    assert measured["decision_ms"] >= measured["whisper_beside_smart_turn_ms"] > 0
    assert measured["smart_turn_ms"] > 0
    assert measured["first_audio_ms"] > 0
    assert list(report["eagerness"]) == ["low", "auto", "high"]
    low = report["eagerness"]["low"]
    assert not low["ends_early"]
    assert low["request_ms"] >= 600  # low waits for the long silence on any machine
    warned = {warning.split(":")[0] for warning in report["warnings"]}
    assert warned == {name for name, f in report["eagerness"].items() if f["warning"] is not None}


def test_voice_doctor_refuses_no_rounds_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--rounds", "0"]) == 1
    assert capsys.readouterr().err.strip() == "voice: error: --rounds must be at least 1, got 0"
