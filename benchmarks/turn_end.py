"""Does the turn end at a short pause, and how often does it end into one? What Smart Turn costs, and saves.

Two ways to run; benchmarks/README.md says what each figure means:

- by default, the speech fixtures as recorded and with a ``--pause-s`` pause put between two of their words
  (cases/fixture_turns.py) through the real VAD, whisper and engine in virtual time, with the fixed 600 ms
  silence (``before``) and with Smart Turn asked at the 200 ms pause (``after``): ``answered_into_pause``,
  ``end_of_speech_to_decision_ms``, ``cost_ms``, ``heard_into_pause`` (the whole virtual room, a scripted
  reply there at once) and ``judgements``.
- ``--set tuning|held_out``: that set of benchmarks/cases/hearing_sets.py beside the fixtures, under ``high``
  and ``auto``, through the assistant's guarded whisper, Smart Turn and engine (common/turn_judging.py):
  ``whole_at_the_short_pause``, ``pauses`` (``--room``: heard into them in the room), ``voice_to_voice`` in
  real time (``--realtime RUNS``), ``rows`` beside ``--against TREE``; ``--snr DB`` and ``--asr-model NAME``
  change the noise and the ears.

How Smart Turn's int8, float32 and reference paths agree on this CPU, and what each costs: turn_end_paths.py.

Usage: python benchmarks/turn_end.py [--pause-s 0.45]
       python benchmarks/turn_end.py --set {tuning,held_out} [--every N] [--room] [--realtime RUNS
       [--realtime-every N]] [--snr DB] [--asr-model NAME] [--against TREE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
from common.harness import percentile, print_json
from common.listening_engine import feed, listening, mic_blocks
from common.turn_judging import at_the_pause, into_pauses, judged_run

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.audio.wav import write_wav
from voice.components import SpeechChoice, SpeechModels, load_speech_models
from voice.conversation.items import UserText
from voice.engine.engine import Engine
from voice.engine.hold import Eagerness
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer
from voice.turn_end.port import EndOfTurn
from voice.turn_end.smart_turn import SmartTurn


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
    args = parser.parse_args()
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
