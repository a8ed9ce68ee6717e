"""voice's pytest plugin as a user's project meets it: `pytest --voice-scenarios DIR` collects the folder's
scenarios as tests (a broken expectation fails with its line), and the voice_scenario fixture hands a test
the run's report for its own asserts.

The shared venv has voice installed (editable) from an older checkout, whose metadata may not name the
plugin yet: the user's pytest is given ``-p voice.testing.pytest_plugin`` only when no installed entry
point names it already (once installed, that is all a user needs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.scenarios import cue

PLUGIN = "voice.testing.pytest_plugin"

INTERRUPTED = {
    "version": 1,
    "llm": {
        "replies": [
            "Tomorrow starts dry and bright, with a light breeze from the south. Around midday the clouds "
            "build, and rain moves in from the west by late afternoon.",
            "On Sunday it stays dry all day.",
        ]
    },
    "user": [cue("what-weather.wav", at_s=0.5), cue("sorry-sunday.wav", during_reply=1, after_ms=3000)],
    "end_s": 16,
    "expect": [
        {"cut": 1, "by": 2, "within_ms": 300},
        {"request": 2, "carries": "interrupted"},
        {"completed": 2},
    ],
}

USERS_OWN_TEST = """
def test_the_correction_is_answered(voice_scenario):
    run = voice_scenario("scenarios/interrupted.json")
    first, second = run.report["turns"]
    assert first["interrupted"] and second["request"][-1]["role"] == "user"
    assert (run.folder / "speaker.wav").is_file()
    assert run.failed_expectations == []
"""


def test_installing_voice_registers_the_plugin_and_loading_it_imports_nothing_heavy() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["pytest11"] == {"voice": PLUGIN}
    # pytest loads entry-point plugins before any conftest, which may pin numpy's kernels first
    heavy = ("numpy", "faster_whisper", "piper")
    probe = f"import sys, {PLUGIN}; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def plugin_arguments() -> list[str]:
    installed = any(point.value == PLUGIN for point in entry_points(group="pytest11"))
    return [] if installed else ["-p", PLUGIN]


@pytest.mark.models
def test_a_users_pytest_collects_a_scenario_folder_and_hands_a_run_to_their_test(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "interrupted.json").write_text(json.dumps(INTERRUPTED))
    broken = INTERRUPTED | {"expect": [{"completed": 1}]}
    (scenarios / "broken.json").write_text(json.dumps(broken))
    (tmp_path / "test_mine.py").write_text(USERS_OWN_TEST)
    junit, kept = tmp_path / "junit.xml", tmp_path / "kept"
    kept.mkdir()

    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin_arguments(), "--voice-scenarios", "scenarios",
         "-p", "no:cacheprovider", f"--junitxml={junit}", "-q", "test_mine.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={**os.environ, "TMPDIR": str(kept)},  # where the failed run is kept
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"interrupted", "broken", "test_the_correction_is_answered"}
    assert cases["interrupted"].find("failure") is None
    assert cases["test_the_correction_is_answered"].find("failure") is None
    failure = cases["broken"].find("failure")
    assert failure is not None
    assert 'FAIL {"completed": 1}: reply 1 was cut at ' in (failure.text or "")
    assert f"the run is kept in {kept}/voice-broken-" in (failure.text or "")
    assert "1 failed, 2 passed" in done.stdout.splitlines()[-1]
