"""`voice simulate SCENARIO.json --out DIR`: a scripted conversation through the real pipeline."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voice.sim.run import prepare_out_dir, run_scenario
from voice.sim.scenario import load_scenario


def register(subparsers: Any) -> None:
    simulate = subparsers.add_parser("simulate", help="run a scenario in the virtual room and write a report")
    simulate.add_argument("scenario", type=Path, help="a scenario .json (design §4)")
    simulate.add_argument(
        "--out", type=Path, required=True, help="folder for report.json, mic.wav, speaker.wav, events.jsonl"
    )
    simulate.add_argument(
        "--realtime", action="store_true", help="pace by the wall clock; latencies are real"
    )
    simulate.add_argument(
        "--force", action="store_true", help="replace the outputs of an earlier run in --out"
    )
    simulate.set_defaults(run=_simulate)


def _simulate(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    prepare_out_dir(args.out, args.force)
    report = run_scenario(scenario, args.out, realtime=args.realtime)
    turns = report["turns"]
    cut = sum(1 for turn in turns if turn["interrupted"])
    print(f"{len(turns)} requests, {cut} interrupted; report in {args.out / 'report.json'}")
    return 0
