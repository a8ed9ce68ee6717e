"""voice's pytest plugin (the ``pytest11`` entry point: installing voice is enough).

``pytest --voice-scenarios DIR`` collects every scenario file under DIR as a test that runs it in the
virtual room and fails with a line per expectation that did not hold; the ``voice_scenario`` fixture
runs one scenario and returns its run (report, records, outcomes) for the user's own asserts.

Nothing heavy is imported until a scenario runs: pytest loads this plugin in every session of an
environment where voice is installed, before any conftest (which may pin numpy's kernels) runs.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from voice.components import SpeechModels
    from voice.sim.expectations import Outcome, RunRecords
    from voice.sim.suite import ScenarioResult, SuiteSettings

_MODELS = pytest.StashKey["SpeechModels"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("voice", "voice scenarios (docs/architecture.md §4)")
    group.addoption(
        "--voice-scenarios",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="collect every scenario *.json under DIR (or the file) as a test of its expectations",
    )
    group.addoption(
        "--voice-judge-llm", metavar="URL", help='an OpenAI-compatible LLM for "judge" expectations'
    )
    group.addoption("--voice-judge-model", metavar="NAME", help="the judge's model name")


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they apply to scenarios too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    roots: list[Path] = config.getoption("voice_scenarios")
    if not roots:
        return
    from voice.errors import ConfigError
    from voice.sim.suite import collect_scenarios

    try:
        paths = collect_scenarios(roots)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    for path in paths:
        items.extend(ScenarioFile.from_parent(session, path=path.resolve()).collect())


class ScenarioFile(pytest.File):
    """A scenario file: one test, named after the file."""

    def collect(self) -> Iterator[ScenarioItem]:
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailed(Exception):
    """A scenario whose expectations did not all hold, or that could not run: its lines say which."""


class ScenarioItem(pytest.Item):
    """Runs the scenario through the real pipeline and checks its ``expect`` list."""

    def runtest(self) -> None:
        from voice.sim.suite import run_and_check

        out = Path(tempfile.mkdtemp(prefix=f"voice-{self.name}-"))
        judge_config = _judge_settings(self.config)
        with _opened_judge(judge_config) as judge:
            result = run_and_check(self.path, out, _suite_settings(self.config), _models(self.config), judge)
        if not result.failed:
            shutil.rmtree(out, ignore_errors=True)
            return
        raise ScenarioFailed("\n".join(_failure_lines(result)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"voice scenario {self.path.name}"


def _failure_lines(result: ScenarioResult) -> list[str]:
    lines = [f"{result.path}: {result.error}"] if result.error else []
    marks = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}
    ordered = sorted(
        result.outcomes, key=lambda o: not o.failed
    )  # what differed first: pytest's summary shows it
    lines += [f"{marks[o.status]} {o.expectation.label}: {o.line}" for o in ordered]
    return [*lines, f"the run is kept in {result.out}"]


def _models(config: pytest.Config) -> SpeechModels:
    """The speech models, loaded once per session."""
    if _MODELS not in config.stash:
        from voice.components import load_speech_models

        config.stash[_MODELS] = load_speech_models()
    return config.stash[_MODELS]


def _suite_settings(config: pytest.Config) -> SuiteSettings:
    from voice.sim.suite import SuiteSettings

    return SuiteSettings()


def _judge_settings(config: pytest.Config) -> Any:
    url, model = config.getoption("voice_judge_llm"), config.getoption("voice_judge_model")
    if url is None:
        return None
    if not model:
        raise pytest.UsageError("--voice-judge-llm needs --voice-judge-model")
    from voice.config.llm import LlmConfig

    return LlmConfig(url, model)


def _opened_judge(config: Any) -> Any:
    from voice.sim.judge import open_judge

    return open_judge(config)


@dataclass(frozen=True)
class VoiceRun:
    """One scenario's run for a test's own asserts: report.json, all it wrote, its expectations' outcomes."""

    report: dict[str, Any]
    records: RunRecords
    outcomes: tuple[Outcome, ...]
    folder: Path  # mic.wav, speaker.wav, report.json, session.jsonl, events.jsonl

    @property
    def failed_expectations(self) -> list[str]:
        return [f"{o.expectation.label}: {o.line}" for o in self.outcomes if o.failed]


@pytest.fixture
def voice_scenario(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str | Path], VoiceRun]:
    """Run a scenario file in the virtual room: ``voice_scenario("weather.json").report["turns"]``."""

    def run(path: str | Path) -> VoiceRun:
        from voice.sim.expectations import check_expectations
        from voice.sim.scenario import load_scenario
        from voice.sim.suite import run_into

        scenario = load_scenario(Path(path))
        folder = tmp_path / f"run-{Path(path).stem}"
        records = run_into(scenario, folder, _suite_settings(request.config), _models(request.config))
        with _opened_judge(_judge_settings(request.config)) as judge:
            outcomes = tuple(check_expectations(scenario.expectations, records, judge))
        return VoiceRun(records.report, records, outcomes, folder)

    return run
