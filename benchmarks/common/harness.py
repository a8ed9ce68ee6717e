"""What every benchmark repeats, once: its common options, timed runs and their spread, the machine's load
before and after with its CPU, the same command on another tree side by side, and the JSON it prints.

A script keeps only its question: it adds ``common_options`` to its parser, measures in one function that
returns its figures, and hands that function to ``print_measured``::

    parser = argparse.ArgumentParser(description=__doc__)
    common_options(parser, runs=5, warmup=1)
    args = parser.parse_args()
    return print_measured(__file__, args, lambda: {"first_audio": spread(timed(say, args.runs, args.warmup))})

The JSON then carries ``load_average`` (``before`` and ``after`` the measuring, 1, 5 and 15 minutes) and ends
with the ``cpu`` it ran on; with ``--against TREE`` it is ``{"before": {"tree": ..., ...}, "after": ...}``,
TREE's run first, in a subprocess importing TREE's voice package, with the same arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from common.against import run_against, without_against
from common.machine import with_cpu


def common_options(
    parser: argparse.ArgumentParser,
    *,
    runs: int | None = None,
    warmup: int | None = None,
    against: bool = True,
    out: bool = True,
) -> None:
    """The shared options: ``--runs`` and ``--warmup`` (given a default), ``--against``, ``--out``."""
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs, help=f"measured runs (default {runs})")
    if warmup is not None:
        help_text = f"runs before measuring, not counted (default {warmup})"
        parser.add_argument("--warmup", type=int, default=warmup, help=help_text)
    if against:
        parser.add_argument("--against", type=Path, help="another source tree to run first, side by side")
    if out:
        parser.add_argument("--out", type=Path, help="also write the JSON here")


def load_average() -> list[float]:
    """The machine's 1, 5 and 15 minute load average, as a figure beside timings taken on a shared machine."""
    return [round(load, 2) for load in os.getloadavg()]


def timed(action: Callable[[], object], runs: int, warmup: int = 0) -> list[float]:
    """Milliseconds each of ``runs`` calls of ``action`` took, after ``warmup`` calls not counted."""
    for _ in range(warmup):
        action()
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        took.append((time.perf_counter() - start) * 1000.0)
    return took


def percentile(values: Iterable[float], share: float) -> float:
    """The nearest-rank ``share`` percentile (0.95 is p95): a value that was measured, never between two."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def spread(values: Iterable[float], digits: int = 1) -> dict[str, Any]:
    """``n``, ``min``, ``p50`` (the median), ``p95`` and ``max`` of ``values``; only ``n`` if none."""
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "min": round(ordered[0], digits),
        "p50": round(statistics.median(ordered), digits),
        "p95": round(percentile(ordered, 0.95), digits),
        "max": round(ordered[-1], digits),
    }


def with_load(measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``measure()``'s figures with the load average before and after it, and its wall time."""
    before = load_average()
    started = time.monotonic()
    figures = dict(measure())
    # a measure that takes its own load or wall time (a soak from its first turn) keeps its figures
    figures.setdefault("load_average", {"before": before, "after": load_average()})
    figures.setdefault("wall_s", round(time.monotonic() - started, 1))
    return figures


def print_json(result: dict[str, Any], out: Path | None = None) -> None:
    """``result`` with its CPU, printed as the script's one JSON object and written to ``out`` if given."""
    printed = json.dumps(with_cpu(result), indent=2)
    print(printed, flush=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(printed + "\n", encoding="utf-8")


def print_measured(
    script: str,
    args: argparse.Namespace,
    measure: Callable[[], dict[str, Any]],
    argv: list[str] | None = None,
) -> int:
    """``measure()`` here with its load, after the same command on ``args.against`` if given; printed as JSON.

    ``argv`` is the command's arguments (``sys.argv[1:]`` unless given), passed on to the other tree's run
    without ``--against``.
    """
    against: Path | None = getattr(args, "against", None)
    out: Path | None = getattr(args, "out", None)
    before = None
    if against is not None:
        before = run_against(against, script, without_against(sys.argv[1:] if argv is None else argv))
    after = with_load(measure)
    print_json(after if before is None else {"before": {"tree": str(against), **before}, "after": after}, out)
    return 0
