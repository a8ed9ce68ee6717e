"""`voice test PATH...`: every scenario under the paths run and checked against its ``expect`` list."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from voice.config.flags import add_speech_arguments, add_turn_arguments
from voice.config.llm import LlmConfig, add_llm_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.errors import ConfigError
from voice.sim.junit import write_junit
from voice.sim.suite import ScenarioResult, SuiteSettings, collect_scenarios, default_jobs, run_suite

MARKS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}


def register(subparsers: Any) -> None:
    test = subparsers.add_parser(
        "test",
        help="run scenarios and check their expectations (docs/architecture.md §4)",
        description='Run every scenario under the paths in the virtual room and check its "expect" list. '
        "Exits 1 if any expectation fails.",
    )
    test.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="scenario files or folders of them")
    test.add_argument("--junit", type=Path, metavar="FILE", help="also write the results as JUnit XML")
    test.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where runs go (default: a new temporary folder); failed ones stay",
    )
    test.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help=f"scenarios run at once (default: the cores, {default_jobs()})",
    )
    test.add_argument(
        "--judge-llm",
        metavar="URL",
        help='an OpenAI-compatible LLM answering "judge" expectations (default: none, skipped)',
    )
    test.add_argument("--judge-model", metavar="NAME", help="the judge's model name at --judge-llm")
    add_config_argument(test)
    add_speech_arguments(test)
    add_turn_arguments(test)
    add_llm_arguments(test)
    test.set_defaults(run=_test)


def _test(args: argparse.Namespace) -> int:
    configured = load_settings(args, os.environ)
    paths = collect_scenarios(args.paths)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    if jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    settings = SuiteSettings(
        configured.speech,
        args.eagerness,
        configured.overlap,
        configured.llm,
        configured.mcp_servers,
        _judge(args),
        configured.speaker,
    )
    root = args.out or Path(tempfile.mkdtemp(prefix="voice-test-"))
    print(f"{len(paths)} scenarios, {min(jobs, len(paths))} at a time", flush=True)
    results = run_suite(paths, root, settings, jobs, on_result=_print_result)
    if args.junit is not None:
        write_junit(results, args.junit)
    print(summary(results))
    failed = any(result.failed for result in results)
    if args.out is None and not failed:
        shutil.rmtree(root, ignore_errors=True)  # the folder it made held only passing runs
    return 1 if failed else 0


def _judge(args: argparse.Namespace) -> LlmConfig | None:
    if args.judge_llm is None:
        if args.judge_model is not None:
            raise ConfigError("--judge-model needs --judge-llm")
        return None
    if not args.judge_model:
        raise ConfigError(f"the judge at {args.judge_llm} needs a model name: give --judge-model")
    return LlmConfig(args.judge_llm, args.judge_model)


def result_lines(result: ScenarioResult) -> list[str]:
    """What the console shows of one scenario: a line per expectation, and where a failed run was kept."""
    lines = [f"{result.path} ({result.seconds:.1f} s)"]
    if result.error is not None:
        lines.append(f"  ERROR {result.error}")
    elif not result.outcomes:
        lines.append("  PASS ran; it has no expectations")
    for outcome in result.outcomes:
        lines.append(f"  {MARKS[outcome.status]} {outcome.expectation.label}: {outcome.line}")
    if result.failed and result.out is not None:
        lines.append(f"  kept the run in {result.out}")
    return lines


def _print_result(result: ScenarioResult) -> None:
    print("\n".join(result_lines(result)), flush=True)
    sys.stdout.flush()


def summary(results: list[ScenarioResult]) -> str:
    outcomes = [outcome for result in results for outcome in result.outcomes]
    counts = {status: sum(o.status == status for o in outcomes) for status in MARKS}
    broken = sum(result.error is not None for result in results)
    failed = sum(result.failed for result in results)
    verdict = "FAILED" if failed else "passed"
    parts = [f"{counts['pass']} passed", f"{counts['fail']} failed"]
    if counts["skip"]:
        parts.append(f"{counts['skip']} skipped")
    if broken:
        parts.append(f"{broken} could not run")
    return f"{verdict}: {len(results) - failed} of {len(results)} scenarios; expectations {', '.join(parts)}"
