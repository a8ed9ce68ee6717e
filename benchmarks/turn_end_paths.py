"""Do Smart Turn's ways of being computed agree on this CPU, and what does each cost?

onnxruntime picks the int8 graph's kernels by the CPU's instruction sets, so the same audio can be judged a
little differently on another CPU (docs/architecture.md, voice/turn_end/float_graph.py). Every speech fixture,
whole and cut before its last word, with the engine's 200 ms pause after it, is judged four ways: ``int8`` as
onnxruntime fuses it, ``int8_unfused`` (its int8 fusions off), ``float32`` as SmartTurn runs it (dequantized
once at load) and ``reference`` that float32 graph through ONNX's own numpy evaluator; then the median cost of
``--calls`` calls of the features and of each session on one question.

``--ways`` and ``--fixtures`` narrow the run, for a slow machine: as an AVX2-only CPU
(``scripts/as-avx2-only .venv/bin/python benchmarks/turn_end_paths.py --ways int8 float32``, emulated), ONNX's
numpy evaluator over every fixture takes hours; the reference is the same on every CPU, so take it natively.

Usage: python benchmarks/turn_end_paths.py [--calls 30] [--ways WAY ...] [--fixtures FILE ...]
[--against TREE] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from cases.fixture_turns import AUDIO
from common.harness import common_options, print_measured, timed

from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.models import onnx_session
from voice.turn_end.smart_turn import SmartTurn, bundled_model_path


def median_ms(call: Callable[[], object], calls: int) -> float:
    # the first call allocates; it is not a decision's cost
    return round(statistics.median(timed(call, calls, warmup=1)), 1)


def unfused_session(path: Path) -> Any:
    """The shipped graph as onnx_session configures it, with its int8 fusions turned off."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = options.enable_mem_pattern = False
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def probability(outputs: Any) -> float:
    """The model's one output, a (1, 1) probability, from a session's or the evaluator's outputs."""
    return round(float(np.ravel(outputs[0])[0]), 6)


WAYS = ("int8", "int8_unfused", "float32", "reference")


def paths(calls: int, ways: list[str], only: list[str] | None = None) -> dict[str, Any]:
    """Smart Turn's probability of each fixture (or of the ``only`` ones), whole and cut before its last word,
    the chosen ``ways``; the costs of the sessions among them."""
    import onnxruntime
    from onnx.reference import ReferenceEvaluator

    from voice.turn_end.float_graph import float32_graph  # here: a tree from before it runs --against

    manifest = json.loads((AUDIO / "manifest.json").read_text())
    speech = [f for f in manifest["fixtures"] if f["kind"] == "speech"]
    unknown = set(only or ()) - {f["file"] for f in speech}
    if unknown:  # said before the models load: emulated, that takes minutes
        raise SystemExit(f"--fixtures: {', '.join(sorted(unknown))} is no speech fixture of {AUDIO}")
    path, model = bundled_model_path(), SmartTurn()
    made = {
        "int8": lambda: onnx_session(path, "Smart Turn"),
        "int8_unfused": lambda: unfused_session(path),
        "float32": lambda: onnx_session(path, "Smart Turn", float32_graph),
    }
    sessions = {name: make() for name, make in made.items() if name in ways}
    reference = ReferenceEvaluator(float32_graph(path)) if "reference" in ways else None
    transcriber = WhisperTranscriber()
    pause = np.zeros(ENGINE_RATE // 5, np.float32)  # the 200 ms of silence after which the engine asks
    found = []
    for fixture in (f for f in speech if only is None or f["file"] in only):
        samples = read_wav(AUDIO / fixture["file"]).samples
        words = transcriber.transcribe(AudioBlock(samples, ENGINE_RATE), word_timings=True).words
        for cut_s in [None] + ([round(words[-1].start_s, 2)] if len(words) > 1 else []):
            print(f"{fixture['file']} cut at {cut_s}", file=sys.stderr)
            said = samples if cut_s is None else samples[: round(cut_s * ENGINE_RATE)]
            features = model.features(AudioBlock(np.concatenate((said, pause)), ENGINE_RATE))
            row: dict[str, Any] = {"fixture": fixture["file"], "cut_s": cut_s}
            for name, session in sessions.items():
                row[name] = probability(session.run(None, {"input_features": features}))
            if reference is not None:
                row["reference"] = probability(reference.run(None, {"input_features": features}))
            found.append(row)
    question = AudioBlock(read_wav(AUDIO / "what-weather.wav").samples, ENGINE_RATE)
    features = model.features(question)
    cost = {"calls": calls, "features": median_ms(lambda: model.features(question), calls)}
    for name, session in sessions.items():
        cost[name] = median_ms(functools.partial(session.run, None, {"input_features": features}), calls)
    return {"onnxruntime": onnxruntime.__version__, "cost_ms": cost, "probabilities": found}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="calls timed per way (default 30)")
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS), help="ways (default all four)")
    parser.add_argument("--fixtures", nargs="+", metavar="FILE", help="only these fixtures (default all)")
    common_options(parser)
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    return print_measured(__file__, args, lambda: paths(args.calls, args.ways, args.fixtures))


if __name__ == "__main__":
    raise SystemExit(main())
