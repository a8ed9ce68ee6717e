"""`voice simulate SCENARIO.json --out DIR`: a scripted conversation through the real pipeline."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from voice.asr.partial_whisper import whisper_partials
from voice.components import load_speech_models, telling_voices_apart
from voice.config.flags import add_speech_arguments, add_turn_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.sim.run import prepare_out_dir, run_scenario
from voice.sim.scenario import RealLlm, load_scenario


def register(subparsers: Any) -> None:
    simulate = subparsers.add_parser("simulate", help="run a scenario in the virtual room and write a report")
    simulate.add_argument("scenario", type=Path, help="a scenario .json (docs/architecture.md §4)")
    simulate.add_argument(
        "--out", type=Path, required=True, help="folder for report.json, mic.wav, speaker.wav, events.jsonl"
    )
    simulate.add_argument(
        "--realtime", action="store_true", help="pace by the wall clock; latencies are real"
    )
    simulate.add_argument(
        "--force", action="store_true", help="replace the outputs of an earlier run in --out"
    )
    simulate.add_argument(
        "--partials",
        action="store_true",
        help="also decode the user's words as they speak: input.partial events in events.jsonl",
    )
    add_config_argument(simulate)
    add_speech_arguments(simulate)
    add_turn_arguments(simulate)
    simulate.set_defaults(run=_simulate)


def _simulate(args: argparse.Namespace) -> int:
    """The scenario decides the LLM; the config chooses the speech models and adds its MCP servers.

    Eagerness: a flag beats the scenario's ``turn.eagerness``, which beats the config's; the scenario's
    ``turn.backchannels``, ``turn.stop_phrases`` and ``turn.speaker`` beat the config's.
    """
    configured = load_settings(args, os.environ)
    scenario = load_scenario(args.scenario)
    prepare_out_dir(args.out, args.force)
    speaker = scenario.speaker or configured.speaker
    pinned = scenario.eagerness if args.eagerness is None else None
    eagerness = pinned or configured.eagerness
    models = telling_voices_apart(load_speech_models(configured.speech_for(eagerness)), speaker)
    from_config = isinstance(scenario.llm, RealLlm) and scenario.llm.from_config
    report = run_scenario(
        scenario,
        args.out,
        realtime=args.realtime,
        llm_config=configured.llm if from_config else None,
        models=models,
        mcp_servers=configured.mcp_servers,
        eagerness=eagerness,
        overlap=configured.overlap,
        speaker=speaker,
        partials=whisper_partials() if args.partials else None,
    )
    turns = report["turns"]
    cut = sum(1 for turn in turns if turn["interrupted"])
    print(f"{len(turns)} requests, {cut} interrupted; report in {args.out / 'report.json'}")
    return 0
