"""The benchmarks' one harness (benchmarks/common/harness.py): a JSON carries its CPU and the load before and
after, medians and p95 are values that were measured, and --against runs the other tree's voice first."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.benchmark_modules import BENCHMARKS, benchmark_module
from tests.support.paths import ROOT
from voice.telemetry.machine import this_cpu

# loaded in the order they import each other, as benchmarks/ is on no path here
benchmark_module("common.machine")
benchmark_module("common.against")
harness: Any = benchmark_module("common.harness")


def test_the_json_carries_the_cpu_and_the_load_before_and_after(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = argparse.Namespace(against=None, out=tmp_path / "figures.json")
    assert harness.print_measured("benchmark.py", args, lambda: {"median_ms": 120}) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["median_ms"] == 120
    assert len(printed["load_average"]["before"]) == 3
    assert len(printed["load_average"]["after"]) == 3
    assert printed["cpu"]["model"] == this_cpu().model
    assert list(printed)[-1] == "cpu"
    assert json.loads(args.out.read_text()) == printed  # --out writes what was printed


def test_the_spread_is_of_values_that_were_measured() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert harness.spread(values) == {"n": 5, "min": 1.0, "p50": 3.0, "p95": 5.0, "max": 5.0}
    assert harness.spread([1.0, 2.0, 3.0, 10.0])["p50"] == 2.5  # an even count: the middle two's mean
    twenty = [float(value) for value in range(1, 21)]
    assert harness.percentile(twenty, 0.95) == 19.0  # nearest rank of 20 values: the 19th, not interpolated
    assert harness.spread([]) == {"n": 0}


def test_timed_runs_leave_the_warm_up_out() -> None:
    calls: list[int] = []
    took = harness.timed(lambda: calls.append(1), runs=3, warmup=2)
    assert len(calls) == 5
    assert len(took) == 3
    assert all(ms >= 0.0 for ms in took)


def test_the_common_options_parse_as_every_benchmark_takes_them(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    harness.common_options(parser, runs=5, warmup=1)
    args = parser.parse_args(["--runs", "2", "--against", str(tmp_path), "--out", str(tmp_path / "x.json")])
    assert (args.runs, args.warmup, args.against, args.out) == (2, 1, tmp_path, tmp_path / "x.json")
    bare = argparse.ArgumentParser()
    harness.common_options(bare, against=False, out=False)
    assert vars(bare.parse_args([])) == {}


def test_against_runs_the_same_command_on_the_other_trees_voice_first(tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "voice").mkdir(parents=True)
    (other / "voice" / "__init__.py").write_text('TREE = "other"\n')
    script = tmp_path / "which_voice.py"
    script.write_text(
        "import argparse, sys\n"
        f"sys.path.insert(0, {str(BENCHMARKS)!r})\n"
        "import voice\n"
        "from common.harness import common_options, print_measured\n"
        "parser = argparse.ArgumentParser()\n"
        "common_options(parser, runs=3)\n"
        "args = parser.parse_args()\n"
        "figures = lambda: {'voice': getattr(voice, 'TREE', 'this'), 'runs': args.runs}\n"
        "raise SystemExit(print_measured(__file__, args, figures))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(script), "--runs", "2", "--against", str(other)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=True)
    printed = json.loads(done.stdout)
    assert printed["before"]["voice"] == "other"  # the figures came from the other tree's voice package
    assert printed["before"]["runs"] == 2  # with the same arguments
    assert printed["after"]["voice"] == "this"
    assert printed["after"]["runs"] == 2
    assert printed["before"]["tree"] == str(other)
    assert "load_average" in printed["before"]
    assert "load_average" in printed["after"]
    assert printed["cpu"]["model"] == this_cpu().model
