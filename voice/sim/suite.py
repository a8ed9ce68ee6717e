"""Scenarios as tests (`voice test`, the pytest plugin): find them, run each through the real pipeline
into its own folder, and check its ``expect`` list against what the run wrote.

Runs go in parallel in worker processes, each loading the speech models once; a passing run's folder is
removed and a failing one's kept, so the user can open its report, WAVs and logs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.components import SpeechModels, load_speech_models, telling_voices_apart
from voice.config.llm import LlmConfig
from voice.engine.hold import Eagerness
from voice.engine.overlap import OverlapPhrases
from voice.errors import ConfigError, VoiceError
from voice.sim.expectations import Judge, Outcome, RunRecords, check_expectations
from voice.sim.judge import open_judge
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm, Scenario, load_scenario
from voice.speech_backends import SpeechChoice
from voice.tools.mcp_settings import McpServerSettings


@dataclass(frozen=True)
class SuiteSettings:
    """What every run shares: the models, the user's turn settings, their LLM and MCP servers, the judge."""

    speech: SpeechChoice = field(default_factory=SpeechChoice)
    eagerness: Eagerness | None = None  # a flag's; None: the scenario's, else auto
    overlap: OverlapPhrases | None = None  # the config's backchannels and stop phrases
    llm: LlmConfig | None = None  # the config's, for scenarios with "llm": {"config": true}
    mcp_servers: tuple[McpServerSettings, ...] = ()
    judge: LlmConfig | None = None  # the LLM answering "judge" expectations; None: they are skipped
    speaker: str | None = None  # the config's [turn] speaker; a scenario's own "speaker" wins


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's run: an outcome per expectation, or the one line saying why it could not run."""

    path: Path
    outcomes: tuple[Outcome, ...] = ()
    error: str | None = None
    out: Path | None = None  # its run's folder, kept when it failed
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None or any(outcome.failed for outcome in self.outcomes)


def collect_scenarios(paths: Iterable[Path]) -> list[Path]:
    """The scenario files: each file named, and every ``*.json`` under each folder named, in order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError(f"no such scenario file or folder: {path}")
    if not found:
        raise ConfigError(f"no scenario files (*.json) under {', '.join(map(str, paths))}")
    return list(dict.fromkeys(found))


def read_records(out: Path) -> RunRecords:
    """What a run wrote into ``out``, as the expectations read it."""
    return RunRecords(
        json.loads((out / "report.json").read_text(encoding="utf-8")),
        _json_lines(out / "session.jsonl"),
        _json_lines(out / "events.jsonl"),
    )


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_and_check(
    path: Path, out: Path, settings: SuiteSettings, models: SpeechModels, judge: Judge | None = None
) -> ScenarioResult:
    """Run the scenario at ``path`` into ``out`` and check its expectations; never raises a VoiceError."""
    started = time.monotonic()
    try:
        scenario = load_scenario(path)
        records = run_into(scenario, out, settings, models)
    except VoiceError as exc:
        kept = out if out.is_dir() else None  # a scenario that did not load has no run to keep
        return ScenarioResult(path, error=str(exc), out=kept, seconds=time.monotonic() - started)
    outcomes = tuple(check_expectations(scenario.expectations, records, judge))
    return ScenarioResult(path, outcomes, None, out, time.monotonic() - started)


def run_into(scenario: Scenario, out: Path, settings: SuiteSettings, models: SpeechModels) -> RunRecords:
    """One run of ``scenario`` with the suite's settings; its records as written into ``out``."""
    from_config = isinstance(scenario.llm, RealLlm) and scenario.llm.from_config
    if out.exists():
        shutil.rmtree(out)
    run_scenario(
        scenario,
        out,
        llm_config=settings.llm if from_config else None,
        models=models,
        mcp_servers=settings.mcp_servers,
        eagerness=settings.eagerness,
        overlap=settings.overlap,
        speaker=settings.speaker,
    )
    return read_records(out)


def _models(settings: SuiteSettings) -> SpeechModels:
    """The models every run shares, with the speaker encoder once if the config keeps to the speaker."""
    return telling_voices_apart(load_speech_models(settings.speech), settings.speaker or "anyone")


def run_folder(root: Path, index: int, path: Path) -> Path:
    """Where the ``index``-th scenario runs: a folder named after it, under ``root``."""
    return root / f"{index:03d}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', path.stem)}"


def run_suite(
    paths: Sequence[Path],
    root: Path,
    settings: SuiteSettings,
    jobs: int,
    on_result: Callable[[ScenarioResult], None] = lambda result: None,
) -> list[ScenarioResult]:
    """Every scenario in ``paths``, ``jobs`` at a time; ``on_result`` hears each as it finishes.

    A passing run's folder is removed; a failing one's is kept under ``root``. Results come back in
    the order of ``paths``.
    """
    root.mkdir(parents=True, exist_ok=True)
    results: dict[int, ScenarioResult] = {}
    for index, result in _results(paths, root, settings, jobs):
        if not result.failed and result.out is not None:
            shutil.rmtree(result.out, ignore_errors=True)
            result = ScenarioResult(result.path, result.outcomes, None, None, result.seconds)
        results[index] = result
        on_result(result)
    return [results[index] for index in sorted(results)]


def _results(
    paths: Sequence[Path], root: Path, settings: SuiteSettings, jobs: int
) -> Iterator[tuple[int, ScenarioResult]]:
    work = [(index, path, run_folder(root, index, path)) for index, path in enumerate(paths, start=1)]
    if jobs <= 1 or len(work) <= 1:
        models = _models(settings)
        with open_judge(settings.judge) as judge:
            for index, path, out in work:
                yield index, run_and_check(path, out, settings, models, judge)
        return
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(work)), initializer=_start_worker, initargs=(settings,)
    ) as pool:
        futures = {pool.submit(_worker_run, path, out): index for index, path, out in work}
        for future in as_completed(futures):
            yield futures[future], future.result()


def default_jobs() -> int:
    """As many runs at once as the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# -- a worker process: its models and judge, loaded once --------------------------------------------

_worker: dict[str, Any] = {}


def _start_worker(settings: SuiteSettings) -> None:
    _worker["settings"] = settings
    _worker["models"] = _models(settings)
    if settings.judge is not None:
        judge_context = open_judge(settings.judge)
        _worker["judge"] = judge_context.__enter__()  # lives as long as the worker process
        _worker["judge_context"] = judge_context


def _worker_run(path: Path, out: Path) -> ScenarioResult:
    judge: Judge | None = _worker.get("judge")
    return run_and_check(path, out, _worker["settings"], _worker["models"], judge)
