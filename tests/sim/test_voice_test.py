"""`voice test PATH...` as a user runs it: scenarios in a folder, a line per expectation, exit 1 on a
failure with the line saying what differed, the failed run kept, JUnit XML a CI reads; against a real
LLM (the user's, named as their config would) the turn's expectations still hold, and a judge answers."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.support.llama_server import ALIAS, LlamaServer
from tests.support.other_voices import television
from tests.support.paths import AUDIO, ROOT
from tests.support.scenarios import cue

LONG_REPLY = (
    "Tomorrow starts dry and bright, with a light breeze from the south. Around midday the clouds build, and "
    "rain moves in from the west by late afternoon. The evening turns cool and wet, so take an umbrella."
)
TALKED_OVER: dict[str, Any] = {
    "version": 1,
    "llm": {"replies": [LONG_REPLY, "On Sunday it stays dry all day, with sunshine in the afternoon."]},
    "user": [
        cue("what-weather.wav", at_s=0.5),
        cue("nod-mm-hmm-joe.wav", during_reply=1, after_ms=2000),
        cue("sorry-sunday.wav", during_reply=1, after_ms=5710),
    ],
    "end_s": 28,
    "expect": [
        {"backchannel": 1},
        {"cut": 1, "by": 3, "within_ms": 300},
        {"heard_prefix": 1},
        {"request": 2, "carries": "interrupted"},
        {"completed": 2},
        {"reply_text": 2, "contains": "Sunday"},
    ],
}


def voice_test(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "voice", "test", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.models
def test_a_folder_passes_and_fails_line_by_line_keeps_the_failed_run_and_writes_junit(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    write(suite / "talked-over.json", TALKED_OVER)
    broken = TALKED_OVER | {
        "expect": [{"cut": 1, "by": 3}, {"completed": 1}]
    }  # reply 1 was cut, not completed
    write(suite / "nested" / "broken.json", broken)
    write(suite / "unreadable.json", TALKED_OVER | {"expect": [{"cut": 1, "within": 300}]})
    out, junit = tmp_path / "runs", tmp_path / "junit.xml"

    done = voice_test(suite, "--jobs", "2", "--out", out, "--junit", junit)

    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert '  PASS {"backchannel": 1}: backchannel ' in "\n".join(lines)
    passed = [line for line in lines if line.startswith("  PASS ")]
    assert (
        len(passed) == len(TALKED_OVER["expect"]) + 1
    )  # every expectation of the good one, the cut of the broken
    (failed,) = [line for line in lines if line.startswith("  FAIL ")]
    assert failed.startswith('  FAIL {"completed": 1}: reply 1 was cut at ')
    (error,) = [line for line in lines if line.startswith("  ERROR ")]
    assert "unknown key 'within'; it takes by, within_ms" in error
    (kept,) = [line.split(" in ", 1)[1] for line in lines if "kept the run in" in line and "broken" in line]
    assert (Path(kept) / "report.json").is_file()
    assert (Path(kept) / "speaker.wav").is_file()
    heard = json.loads((Path(kept) / "report.json").read_text())["turns"][0]["spoken"]
    assert failed.endswith(f'after "...{heard[-67:]}"')  # what differed: the reply was cut, after these words
    assert not any("talked-over" in folder.name for folder in out.iterdir())  # a passing run is not kept
    assert lines[-1] == "FAILED: 1 of 3 scenarios; expectations 7 passed, 1 failed, 1 could not run"

    suites = {suite.get("name"): suite for suite in ET.parse(junit).getroot().iter("testsuite")}
    good, bad = suites[str(suite / "talked-over.json")], suites[str(suite / "nested" / "broken.json")]
    assert (good.get("tests"), good.get("failures")) == ("6", "0")
    assert (bad.get("tests"), bad.get("failures")) == ("2", "1")
    failure = bad.find("testcase[@name='{\"completed\": 1}']/failure")
    assert failure is not None
    assert failure.get("message", "").startswith("reply 1 was cut at ")
    errored = suites[str(suite / "unreadable.json")].find("testcase/error")
    assert errored is not None
    assert "unknown key 'within'" in errored.get("message", "")


@pytest.mark.models
def test_against_the_users_own_llm_the_turn_holds_and_a_named_judge_answers(tmp_path: Path) -> None:
    story = {
        "version": 1,
        "llm": {"config": True, "max_tokens": 80},
        "user": [cue("fox-story.wav", at_s=0.5), cue("wait-stop.wav", during_reply=1, after_ms=800)],
        "end_s": 14,
        "expect": [
            {"cut": 1, "by": 2, "within_ms": 300},
            {"heard_prefix": 1},
            {"no_request_after_stop": True},
            {"reply_text": 1, "judge": "the reply tells a story"},
        ],
    }
    scenario = write(tmp_path / "story.json", story)
    with LlamaServer() as server:
        unjudged = voice_test(
            scenario, "--llm-url", server.url, "--llm-model", ALIAS, "--out", tmp_path / "a"
        )
        judged = voice_test(
            scenario,
            *("--llm-url", server.url, "--llm-model", ALIAS, "--out", tmp_path / "b"),
            *("--judge-llm", server.url, "--judge-model", ALIAS),
        )

    assert unjudged.returncode == 0, unjudged.stdout + unjudged.stderr
    assert '  PASS {"cut": 1, "by": 2, "within_ms": 300}: reply 1 was cut by user cue 2' in unjudged.stdout
    assert '  PASS {"no_request_after_stop": true}' in unjudged.stdout
    assert '  SKIP {"reply_text": 1, "judge": "the reply tells a story"}' in unjudged.stdout
    assert "1 skipped" in unjudged.stdout.splitlines()[-1]

    (verdict,) = [line for line in judged.stdout.splitlines() if '"judge"' in line]
    assert verdict.startswith(("  PASS ", "  FAIL ")), judged.stdout + judged.stderr
    assert "judge says" in verdict
    assert 'it answered "' in verdict
    assert judged.returncode == (1 if verdict.startswith("  FAIL ") else 0)


def readme_example() -> str:
    """The scenario README.md's "Testing your assistant" asks a newcomer to save."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Testing your assistant", 1)[1]
    return section.split("```json\n", 1)[1].split("```", 1)[0]


@pytest.mark.models
def test_the_readmes_example_passes_and_broken_as_it_says_fails_with_the_line_it_shows(
    tmp_path: Path,
) -> None:
    text = readme_example().replace('"../audio/', f'"{ROOT / "audio"}/')
    scenario = tmp_path / "my-tests" / "weather.json"
    scenario.parent.mkdir()
    scenario.write_text(text, encoding="utf-8")
    passing = voice_test(scenario.parent, "--out", tmp_path / "a")
    scenario.write_text(text.replace('{"completed": 2}', '{"completed": 1}'), encoding="utf-8")
    failing = voice_test(scenario.parent, "--out", tmp_path / "b")

    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert passing.stdout.splitlines()[-1] == "passed: 1 of 1 scenarios; expectations 5 passed, 0 failed"
    assert failing.returncode == 1
    (failed,) = [line for line in failing.stdout.splitlines() if line.startswith("  FAIL ")]
    assert failed.startswith('  FAIL {"completed": 1}: reply 1 was cut at ')
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert failed.split(" s after ")[1] in readme  # the heard words the README shows


@pytest.mark.models
def test_the_configs_speaker_setting_reaches_the_scenarios_so_a_television_no_longer_cuts_the_reply(
    tmp_path: Path,
) -> None:
    tv = television(tmp_path, AUDIO / "fox-story.wav")
    reply = "Once upon a time a small red fox lived by a quiet river, and every morning she watched the fish."
    scenario = write(
        tmp_path / "suite" / "television.json",
        {
            "version": 1,
            "llm": {"replies": [reply, "Sorry?", "Sorry?", "Sorry?"], "first_delta_ms": 300},
            "user": [cue("fox-story.wav", at_s=0.5), {"wav": str(tv), "during_reply": 1, "after_ms": 1000}],
            "end_s": 16,
            "expect": [{"completed": 1}],
        },
    )
    config = tmp_path / "voice.toml"
    config.write_text('[turn]\nspeaker = "conversation"\n', encoding="utf-8")

    anyone = voice_test(scenario)
    conversation = voice_test(scenario, "--config", config)

    assert anyone.returncode == 1, anyone.stdout  # anyone takes turns: the television cuts the story
    assert 'FAIL {"completed": 1}: reply 1 was cut' in anyone.stdout
    assert conversation.returncode == 0, conversation.stdout + conversation.stderr  # only its speaker does
