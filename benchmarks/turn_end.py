"""End-of-turn detection: what Smart Turn costs, how often it answers into a pause, and what it saves.

Three ways to run; benchmarks/README.md says what each figure means:

- by default, the speech fixtures as recorded and with a ``--pause-s`` pause put between two of their words
  (cases/fixture_turns.py) through the real VAD, whisper and engine in virtual time, with the fixed 600 ms
  silence (``before``) and with Smart Turn asked at the 200 ms pause (``after``): ``answered_into_pause``,
  ``end_of_speech_to_decision_ms``, ``cost_ms``, ``heard_into_pause`` (the whole virtual room, a scripted
  reply there at once) and ``judgements``.
- ``--set tuning|held_out``: that set of benchmarks/cases/hearing_sets.py beside the fixtures, under ``high``
  and ``auto``, through the assistant's guarded whisper, Smart Turn and engine: ``whole_at_the_short_pause``,
  ``pauses`` (``--room``: heard into them in the room), ``voice_to_voice`` in real time (``--realtime RUNS``),
  ``rows`` beside ``--against TREE``; ``--snr DB`` and ``--asr-model NAME`` change the noise and the ears.
- ``--paths``: Smart Turn computed each way on this CPU (``int8`` as onnxruntime fuses it, ``int8_unfused``,
  ``float32`` as SmartTurn runs it, ``reference`` through ONNX's numpy evaluator), every fixture whole and cut
  at its last word, and the median cost of ``--calls`` calls of each.

Usage: python benchmarks/turn_end.py [--pause-s 0.45]
       python benchmarks/turn_end.py --set {tuning,held_out} [--every N] [--room] [--realtime RUNS
       [--realtime-every N]] [--snr DB] [--asr-model NAME] [--against TREE]
       python benchmarks/turn_end.py --paths [--calls 30]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from cases.fixture_turns import (
    AUDIO,
    LEAD_S,
    Case,
    fixture_turns,
    paused_cases,
    recorded_cases,
    word_times,
)
from cases.hearing_sets import NOISE_SNR_DB, SETS, Turn, turns
from common.against import run_against, without_against
from common.harness import percentile, print_json, timed
from common.listening_engine import feed, listening, mic_blocks

from voice.asr.port import Transcriber, Transcript
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.audio.wav import read_wav, write_wav
from voice.components import SpeechChoice, SpeechModels, load_speech_models, make_engine
from voice.conversation.items import UserText
from voice.engine.engine import Engine
from voice.engine.hold import Eagerness
from voice.engine.transcripts import ends_a_sentence
from voice.engine.utterances import COMPLETE_ABOVE
from voice.models import onnx_session
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer
from voice.turn_end.port import EndOfTurn
from voice.turn_end.smart_turn import SmartTurn, bundled_model_path

INSIDE_MS = -300  # a request this long before the last word's end came at a pause inside the question


class TimedJudge:
    """Smart Turn, timed call by call, keeping what it said."""

    def __init__(self, model: SmartTurn) -> None:
        self._model = model
        self.costs_ms: list[float] = []
        self.said: list[float] = []

    def probability_complete(self, audio: AudioBlock) -> float:
        started = time.perf_counter()
        probability = self._model.probability_complete(audio)
        self.costs_ms.append((time.perf_counter() - started) * 1000)
        self.said.append(probability)
        return probability


def first_request(
    case: Case, transcriber: WhisperTranscriber, judge: TimedJudge | None
) -> tuple[int, str] | None:
    """(sample at which the first request was sent, the user text it carried), with the default VAD; None
    when none was (a listener's word alone, "uh-huh", asks nothing)."""
    engine = Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN))
    runner, requests = listening(engine, transcriber, judge)
    for block in mic_blocks(case.signal):
        feed(runner, block)
        if requests.sent:
            last = requests.sent[0].items[-1]
            return block.end, last.text if isinstance(last, UserText) else ""
    return None


def compare(cases: list[Case], transcriber: WhisperTranscriber, judge: TimedJudge) -> dict[str, Any]:
    into_pause: dict[str, list[str]] = {"before": [], "after": []}
    delays: dict[str, list[float]] = {"before": [], "after": []}
    saved: list[float] = []
    no_request: list[str] = []  # left out of the figures: nothing was answered, early or late
    for case in cases:
        print(case.name, file=sys.stderr)
        judged_before = len(judge.said)
        before, after = first_request(case, transcriber, None), first_request(case, transcriber, judge)
        if before is None or after is None:
            no_request.append(case.name)
            continue
        sent = {"before": before, "after": after}
        said = [round(p, 3) for p in judge.said[judged_before:]]
        for label, (at, text) in sent.items():
            if at < case.speech_end:
                into_pause[label].append(f"{case.name}: {text} (p at each pause: {said})")
            else:
                delays[label].append((at - case.speech_end) * 1000 / ENGINE_RATE)
        if all(at >= case.speech_end for at, _ in sent.values()):
            saved.append((sent["before"][0] - sent["after"][0]) * 1000 / ENGINE_RATE)
    runs = len(cases) - len(no_request)
    return {
        "runs": runs,
        "no_request": no_request,
        "answered_into_pause": {
            label: {"count": len(cut), "rate": round(len(cut) / runs, 3) if runs else None, "runs": cut}
            for label, cut in into_pause.items()
        },
        "end_of_speech_to_decision_ms": {
            **{f"{label}_median": round(statistics.median(d), 1) for label, d in delays.items() if d},
            "saved_median": round(statistics.median(saved), 1) if saved else None,
        },
    }


REPLY = "Here is what I found for you, in a few short words."


def room_run(
    case: Case,
    models: SpeechModels,
    folder: Path,
    eagerness: Eagerness = Eagerness.AUTO,
    realtime: bool = False,
) -> dict[str, Any]:
    """``case`` said into the virtual room, answered at once by a scripted LLM; the run's report.
    In real time the room is left 1 s after the signal (the reply has begun by then), else 5 s."""
    wav = folder / "user.wav"
    write_wav(wav, AudioBlock(case.signal, ENGINE_RATE))
    scenario = {
        "version": 1,
        "llm": {"replies": [REPLY, REPLY, REPLY], "first_delta_ms": 0, "delta_ms": 0},
        "user": [{"wav": str(wav), "at_s": 0.0}],
        "end_s": round(len(case.signal) / ENGINE_RATE + (1.0 if realtime else 5.0), 2),
    }
    path = folder / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    out = folder / "out"
    report: dict[str, Any] = run_scenario(
        load_scenario(path), out, models=models, eagerness=eagerness, realtime=realtime
    )
    return report


def heard_into_pause(
    cases: list[Case],
    transcriber: Transcriber,
    synthesizer: Any,
    judges: dict[str, EndOfTurn | None],
) -> dict[str, Any]:
    """Runs whose reply audio started before the user's last word, with each end-of-turn judge."""
    found: dict[str, Any] = {}
    for label, end_of_turn in judges.items():
        models = SpeechModels(transcriber, synthesizer, end_of_turn)
        heard, requests, discarded = [], 0, 0
        for case in cases:
            print(f"room {label}: {case.name}", file=sys.stderr)
            with tempfile.TemporaryDirectory() as folder:
                report = room_run(case, models, Path(folder))
            requests += len(report["turns"])
            discarded += len(report.get("discarded_requests", []))
            starts = [t["audio_start_s"] for t in report["turns"] if t["audio_start_s"] is not None]
            if starts and min(starts) < case.speech_end / ENGINE_RATE:
                heard.append(f"{case.name}: heard {report['turns'][0]['spoken']!r}")
        found[label] = {"count": len(heard), "requests": requests, "discarded": discarded, "runs": heard}
    return found


class Noted:
    """Whisper and Smart Turn in one run, noting in order what each said (a judgement follows its text)."""

    def __init__(self, transcriber: Transcriber, model: EndOfTurn) -> None:
        self._transcriber = transcriber
        self._model = model
        self.said: list[tuple[str, Any]] = []

    def transcribe(self, audio: AudioBlock, **options: Any) -> Transcript:
        heard = self._transcriber.transcribe(audio, **options)
        self.said.append(("whisper", heard.text))
        return heard

    def probability_complete(self, audio: AudioBlock) -> float:
        probability = self._model.probability_complete(audio)
        self.said.append(("smart_turn", (audio.end, probability)))
        return probability

    def judgements(self, speech_end: int) -> list[dict[str, Any]]:
        """Each judged pause: where it was (ms after the speech's end), Smart Turn's p, whisper's text."""
        found, text = [], ""
        for who, what in self.said:
            if who == "whisper":
                text = what
            else:
                end, probability = what
                at_ms = round((end - speech_end) * 1000 / ENGINE_RATE)
                found.append({"at_ms": at_ms, "p": round(probability, 3), "whisper": text})
        return found


def judged_run(turn: Turn, models: SpeechModels, eagerness: Eagerness) -> dict[str, Any]:
    """``turn`` through the VAD, whisper, Smart Turn and engine of ``eagerness`` until the first request."""
    assert models.end_of_turn is not None
    noted = Noted(models.transcriber, models.end_of_turn)
    runner, requests = listening(make_engine(eagerness=eagerness), noted, noted)
    sent, early = None, False
    for block in mic_blocks(turn.signal):
        judged_before = sum(who == "smart_turn" for who, _ in noted.said)
        feed(runner, block)
        if requests.sent:
            sent = block.end
            # ended at the pause: the request went out on the judgement, not on the VAD's long silence
            early = sum(who == "smart_turn" for who, _ in noted.said) > judged_before
            break
    judgements = noted.judgements(turn.speech_end)
    last = judgements[-1] if judgements else None
    why_not = None
    if not early:
        if last is None:  # else the last judgement was of the final pause: speech after it is judged again
            why_not = "the VAD never paused"
        else:
            unfinished, no_stop = last["p"] <= COMPLETE_ABOVE, not ends_a_sentence(last["whisper"])
            why_not = "both" if unfinished and no_stop else "smart_turn" if unfinished else "whisper"
    return {
        "name": turn.name,
        "family": turn.family,
        "kind": turn.kind,
        "eagerness": eagerness.value,
        "first_part_sounds_finished": turn.first_part_sounds_finished,
        "early": early,
        "into_pause": sent is not None and sent < turn.speech_end,
        "sent_ms_after_speech": None
        if sent is None
        else round((sent - turn.speech_end) * 1000 / ENGINE_RATE),
        "why_not": why_not,
        "judgements": judgements,
    }


def share(runs: list[dict[str, Any]]) -> dict[str, Any]:
    early = sum(run["early"] for run in runs)
    return {"early": early, "of": len(runs), "share": round(early / len(runs), 3) if runs else None}


def by(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return {
        str(value): share([r for r in runs if r[key] == value]) for value in sorted({r[key] for r in runs})
    }


def at_the_pause(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Whole turns: the share ended at the short pause, per family, why not, and the request's delay."""
    whole = [r for r in runs if r["kind"] == "whole"]
    not_early = [r for r in whole if not r["early"]]
    delays = [r["sent_ms_after_speech"] for r in whole if r["sent_ms_after_speech"] is not None]
    return {
        **share(whole),
        "per_family": by(whole, "family"),
        "request_ms_after_speech_median": statistics.median(delays) if delays else None,
        "ended_inside": [r["name"] for r in whole if r["early"] and r["sent_ms_after_speech"] < INSIDE_MS],
        "why_not": {
            why: sum(r["why_not"] == why for r in not_early)
            for why in sorted({r["why_not"] for r in not_early})
        },
        "not_ended_at_the_pause": [
            {
                "name": r["name"],
                "why_not": r["why_not"],
                "sent_ms_after_speech": r["sent_ms_after_speech"],
                "last_judgement": (r["judgements"] or [None])[-1],
            }
            for r in not_early
        ],
    }


def into_pauses(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Turns with a mid-sentence pause: how many had a request sent into the pause."""
    paused = [r for r in runs if r["kind"] == "paused"]
    return {
        "runs": len(paused),
        "request_into_the_pause": sum(r["into_pause"] for r in paused),
        "by_first_part": {
            label: sum(r["into_pause"] for r in paused if r["first_part_sounds_finished"] is finished)
            for label, finished in (("sounds_finished", True), ("unfinished", False), ("unknown", None))
        },
        "ended_into_the_pause": [
            {"name": r["name"], "judgements": r["judgements"]} for r in paused if r["into_pause"]
        ],
    }


def voice_to_voice_ms(report: dict[str, Any], turn: Turn) -> float | None:
    """End of the user's last word to the first reply audio heard out after it (None if none was)."""
    heard = [
        t["audio_start_s"]
        for t in report["turns"]
        if t["audio_start_s"] is not None
        and not t["interrupted"]
        and t["audio_start_s"] >= turn.speech_end / ENGINE_RATE
    ]
    return round((min(heard) - turn.speech_end / ENGINE_RATE) * 1000, 1) if heard else None


def realtime(columns: dict[str, list[Turn]], models: SpeechModels, runs: int, folder: Path) -> dict[str, Any]:
    """Voice-to-voice in the room paced by the wall clock, per eagerness and column: each turn said alone in
    a new session, answered at once by a scripted LLM, ``runs`` times, the cells interleaved."""
    found: dict[str, dict[str, list[float | None]]] = {
        e.value: {column: [] for column in columns} for e in (Eagerness.HIGH, Eagerness.AUTO)
    }
    for number in range(runs):
        for eagerness in (Eagerness.HIGH, Eagerness.AUTO):
            for column, said in columns.items():
                for turn in said:
                    print(f"real time {number + 1}/{runs} {eagerness.value}: {turn.name}", file=sys.stderr)
                    case = Case(turn.name, turn.signal, turn.speech_end)
                    with tempfile.TemporaryDirectory(dir=folder) as work:
                        report = room_run(case, models, Path(work), eagerness=eagerness, realtime=True)
                    found[eagerness.value][column].append(voice_to_voice_ms(report, turn))
    return {
        eagerness: {
            column: {
                "median_ms": median_of(values),
                "heard": sum(v is not None for v in values),
                "of": len(values),
                "ms": values,
            }
            for column, values in by_column.items()
        }
        for eagerness, by_column in found.items()
    }


def median_of(values: list[float | None]) -> float | None:
    heard = [v for v in values if v is not None]
    return round(statistics.median(heard), 1) if heard else None


REALTIME_FIXTURES = ("what-weather.wav", "paris-pause.wav", "tokyo-pause.wav")  # eagerness.py --realtime's


def on_set(args: argparse.Namespace) -> dict[str, Any]:
    """Whole turns ended at the short pause and pauses answered into, on ``args.set`` beside the
    fixtures, under ``high`` and ``auto``; voice-to-voice in real time with ``args.realtime`` runs."""
    which = args.set
    load = [round(os.getloadavg()[0], 2)]
    models = load_speech_models(SpeechChoice(asr_model=args.asr_model))
    timer = WhisperTranscriber()  # tiny.en's word times place a recording's pause, whatever hears it
    columns = {which: turns(which, word_times(timer), args.snr)[:: args.every], "fixtures": fixture_turns()}
    result: dict[str, Any] = {
        "set": which,
        "every": args.every,
        "snr_db": args.snr,
        "asr_model": args.asr_model,
    }
    runs: dict[str, list[dict[str, Any]]] = {}
    for column, cases in columns.items():
        runs[column] = []
        for eagerness in (Eagerness.HIGH, Eagerness.AUTO):
            for index, turn in enumerate(cases):
                print(f"{column} {eagerness.value} {index + 1}/{len(cases)} {turn.name}", file=sys.stderr)
                runs[column].append(judged_run(turn, models, eagerness))
    result["whole_at_the_short_pause"] = {
        e.value: {c: at_the_pause([r for r in runs[c] if r["eagerness"] == e.value]) for c in columns}
        for e in (Eagerness.HIGH, Eagerness.AUTO)
    }
    result["pauses"] = {
        e.value: {c: into_pauses([r for r in runs[c] if r["eagerness"] == e.value]) for c in columns}
        for e in (Eagerness.HIGH, Eagerness.AUTO)
    }
    if args.room:
        heard = {}
        for column, cases in columns.items():
            paused = [Case(t.name, t.signal, t.speech_end) for t in cases if t.kind == "paused"]
            heard[column] = heard_into_pause(
                paused, models.transcriber, models.synthesizer, {"auto": models.end_of_turn}
            )["auto"]
        result["pauses"]["heard_in_auto"] = heard
    if args.realtime:
        fixtures = [t for t in columns["fixtures"] if t.name in REALTIME_FIXTURES]
        whole = [t for t in columns[which] if t.kind == "whole"][:: args.realtime_every]
        with tempfile.TemporaryDirectory(prefix="turn-end-") as folder:
            result["voice_to_voice"] = realtime(
                {which: whole, "fixtures": fixtures}, models, args.realtime, Path(folder)
            )
    load.append(round(os.getloadavg()[0], 2))
    result["load_1min"] = load
    result["runs"] = runs
    return result


def judgements(cases: list[Case], transcriber: WhisperTranscriber, model: SmartTurn) -> list[dict[str, Any]]:
    """Smart Turn and whisper at every 200 ms pause the VAD offers in each recorded fixture."""
    from voice.audio.vad import VoicePaused

    found = []
    for case in cases:
        vad = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
        for block in mic_blocks(case.signal):
            for event in vad.process(block, assistant_speaking=False):
                if isinstance(event, VoicePaused):
                    found.append(
                        {
                            "fixture": case.name,
                            "pause_at_s": round(event.sample / ENGINE_RATE - LEAD_S, 2),
                            "probability_complete": round(model.probability_complete(event.utterance), 3),
                            "whisper": transcriber.transcribe(event.utterance).text,
                        }
                    )
    return found


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The figures the targets name, flat: ``COLUMN ROW`` for the set and the fixtures."""
    found: dict[str, Any] = {}
    columns = (result["set"], "fixtures")
    for eagerness in ("high", "auto"):
        for column in columns:
            whole = result["whole_at_the_short_pause"][eagerness][column]
            found[f"{column} {eagerness}: whole turns ended at the short pause"] = whole["share"]
            found[f"{column} {eagerness}: request ms after the speech, median (virtual)"] = whole[
                "request_ms_after_speech_median"
            ]
            pauses = result["pauses"][eagerness][column]
            found[f"{column} {eagerness}: requests into a pause (of {pauses['runs']})"] = pauses[
                "request_into_the_pause"
            ]
    for column in columns:
        heard = result["pauses"].get("heard_in_auto", {}).get(column)
        if heard is not None:
            found[f"{column} auto: replies heard into a pause"] = heard["count"]
    for eagerness, by_column in result.get("voice_to_voice", {}).items():
        for column, cell in by_column.items():
            found[f"{column} {eagerness}: voice-to-voice ms, median (real time)"] = cell["median_ms"]
    found["load_1min"] = result["load_1min"]
    return found


def side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
    """The headline figures of both trees next to each other; both results follow."""
    rows, then = headline(after), headline(before)
    return {
        "before_tree": tree,
        "rows": {key: {"before": then.get(key), "after": value} for key, value in rows.items()},
        "before": before,
        "after": after,
    }


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


def paths(calls: int) -> dict[str, Any]:
    """Smart Turn's probability of each fixture, whole and cut before its last word, four ways; the costs."""
    import onnxruntime
    from onnx.reference import ReferenceEvaluator

    from voice.turn_end.float_graph import float32_graph  # here: a tree from before it runs --against

    load = [round(os.getloadavg()[0], 2)]
    path, model = bundled_model_path(), SmartTurn()
    sessions = {
        "int8": onnx_session(path, "Smart Turn"),
        "int8_unfused": unfused_session(path),
        "float32": onnx_session(path, "Smart Turn", float32_graph),
    }
    reference = ReferenceEvaluator(float32_graph(path))
    transcriber = WhisperTranscriber()
    manifest = json.loads((AUDIO / "manifest.json").read_text())
    pause = np.zeros(ENGINE_RATE // 5, np.float32)  # the 200 ms of silence after which the engine asks
    found = []
    for fixture in (f for f in manifest["fixtures"] if f["kind"] == "speech"):
        samples = read_wav(AUDIO / fixture["file"]).samples
        words = transcriber.transcribe(AudioBlock(samples, ENGINE_RATE), word_timings=True).words
        for cut_s in [None] + ([round(words[-1].start_s, 2)] if len(words) > 1 else []):
            print(f"{fixture['file']} cut at {cut_s}", file=sys.stderr)
            said = samples if cut_s is None else samples[: round(cut_s * ENGINE_RATE)]
            features = model.features(AudioBlock(np.concatenate((said, pause)), ENGINE_RATE))
            row: dict[str, Any] = {"fixture": fixture["file"], "cut_s": cut_s}
            for name, session in sessions.items():
                row[name] = probability(session.run(None, {"input_features": features}))
            row["reference"] = probability(reference.run(None, {"input_features": features}))
            found.append(row)
    question = AudioBlock(read_wav(AUDIO / "what-weather.wav").samples, ENGINE_RATE)
    features = model.features(question)
    cost = {"calls": calls, "features": median_ms(lambda: model.features(question), calls)}
    for name, session in sessions.items():
        cost[name] = median_ms(functools.partial(session.run, None, {"input_features": features}), calls)
    load.append(round(os.getloadavg()[0], 2))
    return {
        "onnxruntime": onnxruntime.__version__,
        "cost_ms": cost,
        "load_1min": load,
        "probabilities": found,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pause-s", type=float, default=0.45, help="the pause put between two words")
    parser.add_argument("--set", choices=SETS, help="measure on this set of benchmarks/cases/hearing_sets.py")
    parser.add_argument("--every", type=int, default=1, help="with --set: every Nth turn of the set")
    parser.add_argument("--room", action="store_true", help="with --set: pauses in the room too")
    parser.add_argument(
        "--realtime", type=int, default=0, metavar="RUNS", help="with --set: voice-to-voice, RUNS times"
    )
    parser.add_argument(
        "--realtime-every", type=int, default=4, help="with --realtime: every Nth whole turn of the set"
    )
    parser.add_argument(
        "--snr", type=float, default=NOISE_SNR_DB, help="with --set: pink noise this many dB below the speech"
    )
    parser.add_argument("--asr-model", help="with --set: the whisper model that hears (default tiny.en)")
    parser.add_argument("--against", type=Path, help="with --set: another tree to run first")
    parser.add_argument("--paths", action="store_true", help="Smart Turn computed each way, and its cost")
    parser.add_argument("--calls", type=int, default=30, help="with --paths: calls timed per way")
    args = parser.parse_args()
    if args.paths:
        print_json(paths(args.calls))
        return
    if args.set:
        before = None
        if args.against is not None:
            before = run_against(args.against, __file__, without_against(sys.argv[1:]))
        after = on_set(args)
        found = after if before is None else side_by_side(before, after, str(args.against))
        print_json(found)
        return

    manifest = json.loads((AUDIO / "manifest.json").read_text())
    speech = [f for f in manifest["fixtures"] if f["kind"] == "speech"]
    transcriber = WhisperTranscriber()
    model = SmartTurn()
    judge = TimedJudge(model)
    recorded = recorded_cases(speech)
    paused = paused_cases(speech, transcriber, args.pause_s)
    both: dict[str, TimedJudge | None] = {"before": None, "after": judge}
    synthesizer = PiperSynthesizer()
    result = {
        "recorded_fixtures": compare(recorded, transcriber, judge),
        f"with_a_{args.pause_s}_s_pause_between_two_words": compare(paused, transcriber, judge),
        "heard_into_pause": {
            "recorded_fixtures": heard_into_pause(recorded, transcriber, synthesizer, both),
            f"with_a_{args.pause_s}_s_pause_between_two_words": heard_into_pause(
                paused, transcriber, synthesizer, both
            ),
        },
        "cost_ms": {
            "n": len(judge.costs_ms),
            "median": round(statistics.median(judge.costs_ms), 1),
            "p95": round(percentile(judge.costs_ms, 0.95), 1),
        },
        "judged_complete": f"{sum(p > 0.5 for p in judge.said)} of {len(judge.said)} judged pauses",
        "judgements": judgements(recorded, transcriber, model),
    }
    print_json(result)


if __name__ == "__main__":
    main()
