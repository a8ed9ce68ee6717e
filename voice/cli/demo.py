"""`voice demo`: a built-in conversation with an interruption, through the real models, in the virtual room.

Made for a machine with no sound devices: the user's two utterances are recorded WAVs shipped with the
package, the assistant thinks with the configured LLM (the embedded llama.cpp model by default) and
speaks with piper; the dialogue is printed with timings and the whole conversation written to a WAV.
"""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.config.llm import add_llm_arguments, config_from_args
from voice.sim.demo_scenario import demo_scenario
from voice.sim.run import prepare_out_dir, run_scenario
from voice.sim.scenario import RealLlm


def register(subparsers: Any) -> None:
    demo = subparsers.add_parser("demo", help="a conversation with an interruption, in a virtual room")
    demo.add_argument(
        "--out", type=Path, help="folder for the outputs (default: a new voice-demo-TIME folder)"
    )
    add_llm_arguments(demo)
    demo.set_defaults(run=_demo)


def _demo(args: argparse.Namespace) -> int:
    config = config_from_args(args, os.environ)
    out: Path = args.out or Path(f"voice-demo-{datetime.now():%Y%m%d-%H%M%S}")
    prepare_out_dir(out, force=False)
    thinker = (
        "the embedded llama.cpp server"
        if config.embedded
        else f"{config.model or 'the model'} at {config.url}"
    )
    print(f"voice demo: whisper tiny.en listens, {thinker} thinks, piper joe-medium speaks")
    print("(loading models and running the conversation in virtual time...)")
    report = run_scenario(
        demo_scenario(RealLlm(config.url, config.model, max_tokens=60)), out, llm_config=config
    )
    mic, speaker = read_wav(out / "mic.wav"), read_wav(out / "speaker.wav")
    mixed = np.clip(mic.samples + speaker.samples, -1.0, 1.0)
    write_wav(out / "conversation.wav", AudioBlock(mixed.astype(np.float32), ENGINE_RATE))
    print(render_dialogue(report))
    print(f"\nlisten: {out / 'conversation.wav'}   details: {out / 'report.json'}, {out / 'session.jsonl'}")
    return 0


def render_dialogue(report: dict[str, Any]) -> str:
    """The conversation in time order: who spoke when, what the model generated and what was heard."""
    lines: list[tuple[float, str]] = []
    for speech in report["user_speech"]:
        lines.append(
            (
                speech["start_s"],
                f"{_span(speech['start_s'], speech['end_s'])}  you        {speech['transcript']}",
            )
        )
    for number, turn in enumerate(report["turns"], start=1):
        start = turn["audio_start_s"]
        if start is None:
            lines.append(
                (_request_time(report, number), f"{'':>13}  (request {number} cancelled before any audio)")
            )
            continue
        text = f"{_span(start, turn['audio_end_s'])}  assistant  {turn['spoken'] or '(nothing heard)'}"
        if turn["interrupted"]:
            unheard = turn["reply"][len(turn["spoken"]) :].strip()
            text += (
                f"\n{'':>13}  cut at {turn['audio_end_s']:.2f} s (you spoke at {turn['barge_in_s']:.2f} s)"
            )
            text += f"\n{'':>13}  generated but not heard: {unheard or '(nothing)'}"
        lines.append((start, text))
    interrupted = [t for t in report["turns"] if t["interrupted"]]
    summary = (
        "\nwhat the next request carried after the interruption:" if interrupted else "\n(no interruption)"
    )
    body = [text for _, text in sorted(lines, key=lambda line: line[0])]
    if interrupted:
        cut_at = report["turns"].index(interrupted[0])
        if cut_at + 1 < len(report["turns"]):
            for item in report["turns"][cut_at + 1]["request"]:
                flag = " (interrupted)" if item.get("interrupted") else ""
                body_item = f"  {item['role']}{flag}: {item.get('text', item.get('output', ''))}"
                summary += "\n" + body_item
    return "\n".join(body) + summary


def _span(start: float, end: float | None) -> str:
    return f"{start:5.2f}-{end if end is not None else start:5.2f}s"


def _request_time(report: dict[str, Any], number: int) -> float:
    speech = report["user_speech"]
    return speech[min(number, len(speech)) - 1]["end_s"] if speech else 0.0
