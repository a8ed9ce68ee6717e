"""Voice-to-voice split into its steps, as JSON: where the time from the end of speech to the reply goes.

The end of the user's speech to the first reply audio, median over real-time runs, split into its steps
from the event stream and timed calls (benchmarks/common/voice_parts.py says how): ``scripted_at_once``
(plain-turn, pause-mid-sentence and pause-mid-question, each twice, with the scripted LLM's whole reply
there at once) and ``embedded`` (the demo conversation, three runs, SmolLM2). ``--against TREE`` runs it
on that tree first, side by side; ``--eagerness`` sets this tree's.

Usage: python benchmarks/voice_to_voice_parts.py [--against TREE [--rounds N]] [--embedded-only |
--scripted-only] [--eagerness E]   (about 2 minutes on 2 cores, twice with --against; also
``barge_in.py --voice-to-voice``)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import voice_parts
from common.against import run_against
from common.scenario_runs import (
    LOCAL_MAX_TOKENS,
    LOCAL_RUNS,
    SCENARIOS,
    Run,
    latency_row,
    load_manifest,
    progress,
    reply_delays,
)

from voice.components import SpeechModels, load_speech_models
from voice.config.llm import LlmConfig, resolve_llm_config
from voice.llm.embedded_server import EmbeddedServer
from voice.sim.demo_scenario import demo_scenario
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm, load_scenario

AT_ONCE_SCENARIOS = ("plain-turn", "pause-mid-sentence", "pause-mid-question")
AT_ONCE_RUNS = 2


def at_once_variant(name: str, folder: Path) -> Path:
    """A copy of scenario ``name`` whose scripted LLM has its whole reply at once (no first-delta delay)."""
    data = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    for cue in data["user"]:
        if "wav" in cue:
            cue["wav"] = str((SCENARIOS / cue["wav"]).resolve())
    data["llm"]["first_delta_ms"] = 0
    data["llm"]["delta_ms"] = 0
    path = folder / f"{name}-at-once.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def parts_rows(
    report: dict[str, Any], out: Path, timers: voice_parts.Timers, run_started: float, **label: Any
) -> list[dict[str, Any]]:
    rows = []
    run = Run(out.name, report, out, None)
    for index, (user_end, audio_start) in reply_delays(run, load_manifest()).items():
        rows.append(
            {
                **label,
                **latency_row(index, user_end, audio_start),
                "parts_ms": voice_parts.turn_parts(out, timers, run_started, index, user_end, audio_start),
            }
        )
    return rows


def eagerness_kwargs(eagerness: str | None) -> dict[str, Any]:
    """``run_scenario``'s eagerness, when one is asked for (a tree from before the setting takes none)."""
    if eagerness is None:
        return {}
    from voice.engine.hold import Eagerness

    return {"eagerness": Eagerness(eagerness)}


def voice_to_voice_parts(
    models: SpeechModels,
    work: Path,
    started: float,
    eagerness: str | None = None,
    embedded_only: bool = False,
    scripted_only: bool = False,
) -> dict[str, Any]:
    """Voice-to-voice medians over real-time runs, scripted LLM at once and embedded, split into steps."""
    variants = work / "at-once-scenarios"
    variants.mkdir(parents=True, exist_ok=True)
    scripted: list[dict[str, Any]] = []
    for name in () if embedded_only else AT_ONCE_SCENARIOS:
        path = at_once_variant(name, variants)
        for number in range(1, AT_ONCE_RUNS + 1):
            progress(f"voice to voice, LLM at once: {name} run {number}/{AT_ONCE_RUNS}", started)
            timers = voice_parts.Timers()
            out = work / "v2v-at-once" / f"{name}-{number}"
            out.mkdir(parents=True)
            with voice_parts.timed_chat_models(timers):
                run_started = time.monotonic()
                report = run_scenario(
                    load_scenario(path),
                    out,
                    realtime=True,
                    models=voice_parts.timed_models(models, timers),
                    **eagerness_kwargs(eagerness),
                )
            scripted += parts_rows(report, out, timers, run_started, scenario=name, run=number)
    embedded: list[dict[str, Any]] = []
    if scripted_only:
        return {
            "scripted_at_once": {**voice_parts.medians(scripted), "turns": scripted},
            "embedded": embedded_medians(embedded),
        }
    embedded_config = resolve_llm_config(None, None, None, {})
    progress("voice to voice, embedded LLM: starting the llama.cpp server", started)
    with EmbeddedServer(embedded_config.gguf, model=embedded_config.model) as server:
        served = LlmConfig(url=server.url, model=server.model)
        for number in range(1, LOCAL_RUNS + 1):
            progress(f"voice to voice, embedded LLM: demo run {number}/{LOCAL_RUNS}", started)
            timers = voice_parts.Timers()
            out = work / "v2v-embedded" / f"demo-{number}"
            out.mkdir(parents=True)
            scenario = demo_scenario(RealLlm(None, None, max_tokens=LOCAL_MAX_TOKENS))
            with voice_parts.timed_chat_models(timers):
                run_started = time.monotonic()
                report = run_scenario(
                    scenario,
                    out,
                    realtime=True,
                    llm_config=served,
                    models=voice_parts.timed_models(models, timers),
                    **eagerness_kwargs(eagerness),
                )
            embedded += parts_rows(report, out, timers, run_started, run=number)
    return {
        "scripted_at_once": {**voice_parts.medians(scripted), "turns": scripted},
        "embedded": embedded_medians(embedded),
    }


def embedded_medians(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over every embedded turn, and apart for the question (turn 1) and the cut-in (turn 2)."""
    return {
        **voice_parts.medians(turns),
        "question": voice_parts.medians([row for row in turns if row["turn"] == 1]),
        "cut_in": voice_parts.medians([row for row in turns if row["turn"] == 2]),
        "turns": turns,
    }


def voice_to_voice_only(
    work: Path, eagerness: str | None = None, embedded_only: bool = False, scripted_only: bool = False
) -> dict[str, Any]:
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    progress("loading the speech models", started)
    models = load_speech_models()
    result = voice_to_voice_parts(models, work, started, eagerness, embedded_only, scripted_only)
    result["load_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return result


def merged_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One tree's rounds as one result: medians over every round's turns, each round's load average."""
    scripted = [row for result in rounds for row in result["scripted_at_once"]["turns"]]
    embedded = [row for result in rounds for row in result["embedded"]["turns"]]
    return {
        "scripted_at_once": {**voice_parts.medians(scripted), "turns": scripted},
        "embedded": embedded_medians(embedded),
        "load_1min": [result["load_1min"] for result in rounds],
    }


def side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
    """The medians of both trees next to each other; every turn's parts follow."""

    def summary(result: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in result.items() if k != "turns"}

    return {
        "before_tree": tree,
        "load_1min": {"before": before["load_1min"], "after": after["load_1min"]},
        "scripted_at_once": {
            "before": summary(before["scripted_at_once"]),
            "after": summary(after["scripted_at_once"]),
        },
        "embedded": {
            part: {"before": summary(before["embedded"][part]), "after": summary(after["embedded"][part])}
            for part in ("question", "cut_in")
        }
        | {"all": {"before": summary(before["embedded"]), "after": summary(after["embedded"])}},
        "before": before,
        "after": after,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Path, help="another tree to run first, side by side")
    parser.add_argument("--embedded-only", action="store_true", help="only the embedded LLM's runs")
    parser.add_argument("--scripted-only", action="store_true", help="only the scripted LLM's runs")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="rounds of TREE's runs then this tree's, alternated (the load moves)",
    )
    parser.add_argument(
        "--eagerness",
        choices=("low", "auto", "high"),
        help="this tree's eagerness (the --against tree runs as it is)",
    )
    args = parser.parse_args(argv)
    others = ["--embedded-only"] if args.embedded_only else ["--scripted-only"] if args.scripted_only else []
    befores, afters = [], []
    for _ in range(args.rounds):
        if args.against is not None:  # the other tree runs as it is, without this tree's eagerness
            befores.append(run_against(args.against, __file__, others))
        with tempfile.TemporaryDirectory(prefix="voice-to-voice-") as folder:
            afters.append(
                voice_to_voice_only(Path(folder), args.eagerness, args.embedded_only, args.scripted_only)
            )
    after = merged_rounds(afters)
    result = after if not befores else side_by_side(merged_rounds(befores), after, str(args.against))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
