"""Peak memory, as JSON: the RSS of a fresh process that loads tiny.en, joe-medium and the echo canceller
and runs room-echo-noise once (getrusage's ru_maxrss).

The probe runs in a child of this script's own: a child's ru_maxrss starts from its parent's RSS at the
fork, so the parent stays small (bars.py measures it before it loads anything).

Usage: python benchmarks/memory.py   (under a minute on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from typing import Any

from common.machine import with_cpu
from common.scenario_runs import SCENARIOS

from voice.audio.echo import WebRtcEchoCanceller
from voice.components import load_speech_models, make_engine
from voice.sim.driver import Pipeline, RoomSimulation
from voice.sim.scenario import load_scenario

MEMORY_SCENARIO = "room-echo-noise"


def memory_probe() -> dict[str, Any]:
    """In this process: load the models and the echo canceller once, run one scenario, read peak RSS."""
    models = load_speech_models()
    pipeline = Pipeline(models.transcriber, models.synthesizer, make_engine, WebRtcEchoCanceller())
    RoomSimulation(load_scenario(SCENARIOS / f"{MEMORY_SCENARIO}.json"), pipeline).run()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"scenario": MEMORY_SCENARIO, "peak_rss_mb": round(peak_kib / 1024, 1)}


def measure_memory() -> dict[str, Any]:
    """``memory_probe`` in a fresh process."""
    probe = subprocess.run(
        [sys.executable, __file__, "--probe"],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(probe.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    print(json.dumps(memory_probe() if args.probe else with_cpu({"memory": measure_memory()}), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
