"""The turn-taking scorecard: Full-Duplex-Bench v1's metrics of the assistant, on voices it was not tuned on.

Each case of benchmarks/cases/full_duplex_cases.py (pause handling, the user's backchannels over a reply,
smooth turn-taking, user interruption, and ours: cut-ins that open with a listener's word and a breath;
held-out espeak-ng accents and real recordings) is played through `voice simulate`'s run (whisper, piper,
Smart Turn, the echo canceller and the engine, all real; the LLM scripted, since the card is about
turn-taking), and its speaker.wav is scored as benchmarks/common/full_duplex_metrics.py says FDB scores its
output.wav. Cut-ins and backchannels also get τ-voice's yield rate and S_BC and issue 45's words kept and
silences (benchmarks/common/cut_in_outcome.py). Prints one JSON object on stdout and the tables on stderr.

In virtual time (the default) the run is deterministic and compute costs nothing: turn-over rates are final,
latencies and gaps are the turn-taking policy alone. ``--realtime`` paces the room by the wall clock, so
latencies and gaps include whisper's, Smart Turn's and piper's time on this machine (take them on a
quiet one).

Three categories have a voice that is not talking to the assistant (issue 47: a television under the
user's question and over the reply, two people chatting over the reply, the user cutting in while either
goes on): Full-Duplex-Bench v1.5's background speech and talking to others, scored with τ-voice's S_ND
(non-directed speech ignored) beside the yield rate to the user's cut-ins, false rejects of the user and
the reaction to their cut-ins (benchmarks/common/bystander_outcome.py). Each of their cases runs once with
every ``--speaker`` setting (``[turn] speaker``; default anyone and conversation), side by side.

Usage: python benchmarks/full_duplex.py [--realtime] [--cases N] [--category NAME ...] [--eagerness E]
       [--speaker S ...] [--out DIR] [--against TREE]   (--against runs the same cases on TREE's voice
       package first and prints {"before": ..., "after": ...}; --out keeps every run's outputs,
       scorecard.json and table.md)
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

from cases.full_duplex_cases import ensure_cases
from common import full_duplex_metrics as fdb
from common.against import run_against, without_against, without_option
from common.bystander_outcome import UserCue, bystander_outcome, bystander_summary
from common.cut_in_outcome import (
    cut_in_outcome,
    cut_in_summary,
    selectivity,
    talked_through,
    words_kept,
    yielded,
)
from common.full_duplex_table import table
from common.machine import with_cpu

import voice
from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.components import load_speech_models
from voice.engine.hold import Eagerness, parse_eagerness
from voice.engine.speaker_check import SPEAKERS
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

CUT_INS = ("user_interruption", "opening_word_cut_in")  # real cut-ins: the ones to yield to
BYSTANDERS = ("background_speech", "talking_to_others", "bystander_cut_in")  # played with each --speaker
CATEGORIES = ("pause_handling", "backchannel", "smooth_turn_taking", *CUT_INS, *BYSTANDERS)
# Full-Duplex-Bench v1.0's published figures (its README, v1_v1.5/README.md), on its own data.
PUBLISHED = {
    "GPT-Realtime": {
        "pause_handling_tor": 0.010,  # its synthetic set; 0.120 on Candor
        "backchannel_tor": 0.000,
        "smooth_turn_taking_tor": 1.000,
        "smooth_turn_taking_latency_s": 1.470,
        "user_interruption_tor": 0.970,
        "user_interruption_latency_s": 1.500,
        "user_interruption_gpt4o": 3.850,
    },
    "Moshi": {
        "pause_handling_tor": 0.985,
        "backchannel_tor": 1.000,
        "smooth_turn_taking_tor": 0.941,
        "smooth_turn_taking_latency_s": 0.265,
        "user_interruption_tor": 1.000,
        "user_interruption_latency_s": 0.257,
        "user_interruption_gpt4o": 0.765,
    },
}
# τ-voice's published selectivity (Sierra's tau2-bench voice leaderboard), on its own data.
TAU_VOICE_PUBLISHED = {
    "gpt-realtime-2": {"yield_rate": 0.998, "s_bc": 0.011},
    "gpt-live-1": {"yield_rate": 0.36, "s_bc": 0.99},
}
# τ-voice's published S_ND (non-directed speech ignored) beside its yield rate, on its own data (issue 47).
TAU_VOICE_BYSTANDERS = {
    "gpt-live-1": {"s_nd": 0.46, "yield_rate": 0.36},
    "gpt-realtime-2": {"s_nd": 0.20, "yield_rate": 0.998},
}
BYSTANDER_DIFFERENCES = (
    "Full-Duplex-Bench v1.5 plays a TTS'd background or side remark over the model's turn and labels what "
    "the output did after it (respond, resume, ...) with an LLM judge on its ASR; here the behaviour is "
    "read from the run's requests and reply states (no judge), and the bystanders are real recordings.",
    "FDB v1.5's talking_to_others is the user turning to speak to someone else; here it is two other people "
    "chatting near the mic. The user's own aside is not told apart by voice: it would be taken as a turn.",
    "S_ND (τ-voice): a non-directed utterance is ignored when the agent neither yields (stops) nor answers; "
    "here a case's bystander is ignored when no reply was cut while the user said nothing and no request "
    "carried none of the user's words. A pause the reply took back is not a yield there; the stricter "
    "'without a pause' counts it as one.",
    "Cut-ins over a bystander: yielded as on the card (the reply cut, a request carrying the cut-in, its "
    "reply played); a handful of cases, not τ-voice's hundreds of simulated calls.",
)
DIFFERENCES = (
    "The data differ: FDB plays Candor and ICC conversations and its own synthetic sets; this card plays the "
    "project's scripted cases in held-out espeak-ng voices and two real recordings.",
    "The output's words come from whisper tiny.en with word times (FDB: parakeet-tdt-0.6b-v2); whisper is "
    "not run over silence, where it may invent words.",
    "Backchannel: FDB scores the model backchannelling while the user talks; here the user backchannels "
    "over the assistant's reply (issue 36), and a turn-over is a new reply after it by FDB's rule (the "
    "story going on is none).",
    "User interruption: FDB rates relevance with GPT-4-turbo (0-5); there is no judge here, so 'answered' is "
    "the share whose output after the interruption is the scripted answer to it.",
    "Pause handling: FDB's output is as long as its input, which ends just after the pause; here the window "
    "ends with the user's last word.",
    "The user's times come from where the room placed each clip and the clip's measured speech span (FDB: "
    "its annotations); speaker.wav holds what the assistant played, on mic.wav's clock.",
)
TAU_VOICE_DIFFERENCES = (
    "The data differ: τ-voice's are simulated customer-service calls in 200 ms ticks; these are the cases "
    "above, one cut-in or backchannel over a scripted story each.",
    "Yield rate (τ-voice's R_Y): τ-voice counts a cut-in yielded to when the agent stops within 2 s; here "
    "the reply must stop, its own words must not go on after the cut-in, and the scripted answer must play.",
    "S_BC (τ-voice): a backchannel is talked through when the agent does not stop within 1 s; here when "
    "the story's own words go on after it and no new reply takes the turn, however long it paused.",
)


def whisper_words(transcriber: Transcriber) -> fdb.Transcribe:
    def transcribe(samples: fdb.Samples) -> list[fdb.Word]:
        block = AudioBlock(samples.astype("float32"), ENGINE_RATE)
        words = transcriber.transcribe(block, word_timings=True).words
        return [fdb.Word(word.text, word.start_s, word.end_s) for word in words]

    return transcribe


def cue_times(
    report: dict[str, Any], case: dict[str, Any], clips: dict[str, Any]
) -> list[tuple[float, float] | None]:
    """(speech onset, speech end) of each cue on the run's clock, None for a cue the room never placed."""
    placed = {cue["cue"]: cue["at_s"] for cue in report["user_audio"]}
    times: list[tuple[float, float] | None] = []
    for number, cue in enumerate(case["cues"], start=1):
        at = placed.get(number)
        clip = clips[cue["clip"]]
        times.append(None if at is None else (at + clip["start_s"], at + clip["end_s"]))
    return times


def events_after(events: list[dict[str, Any]], onset_s: float) -> dict[str, Any]:
    """What the event stream says happened from ``onset_s`` on: a cross-check, never the score."""
    later = [event for event in events if event.get("t", 0.0) >= onset_s]
    paused: float | None = None
    resumed = None  # from the first pause to the reply going on, unless it was cut first
    for event in later:
        state = event.get("state") if event["type"] == "state" else None
        if paused is None and state == "paused":
            paused = event["t"]
        elif paused is not None and event["type"] == "response.interrupted":
            break
        elif paused is not None and state == "speaking":
            resumed = round((event["t"] - paused) * 1000)
            break
    return {
        "requests": sum(e["type"] == "response.created" for e in later),
        "interrupted": sum(e["type"] == "response.interrupted" for e in later),
        "backchannels": sum(e["type"] == "input.backchannel" for e in later),
        "pause_to_resume_ms": resumed,
    }


def score_bystander(
    case: dict[str, Any], folder: Path, clips: dict[str, Any], out: Path, transcriber: Transcriber
) -> dict[str, Any]:
    """A bystander case's figures (benchmarks/common/bystander_outcome.py) from one run's outputs, each user
    cue's words kept beside those the same whisper keeps of its clip alone (the issue's reference)."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    events = [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    speaker = read_wav(out / "speaker.wav").samples
    times = cue_times(report, case, clips)
    row: dict[str, Any] = {"case": case["name"], "voice": case["voice"], "bystander": case["bystander"]}
    row["under_db"] = case["under_db"]
    placed = [(cue, at) for cue, at in zip(case["cues"], times, strict=True)]
    if any(at is None for _cue, at in placed):
        return row | {"error": "the room never placed every cue (a reply it waits for never played)"}
    users = [
        UserCue(clips[cue["clip"]]["text"], cue["role"], at[0], at[1])
        for cue, at in placed
        if at is not None and cue["role"] != "bystander"
    ]
    onset = next(at[0] for cue, at in placed if at is not None and cue["role"] == "bystander")
    found = bystander_outcome(users, onset, report, events, speaker)
    said = [cue for cue in case["cues"] if cue["role"] != "bystander"]
    for cue, user in zip(said, found["user"], strict=True):
        alone = transcriber.transcribe(read_wav(folder / "clips" / f"{cue['clip']}.wav")).text
        user["words_kept_alone"] = words_kept(user["said"], alone)["words_kept"]
    return row | found


def score(
    case: dict[str, Any], folder: Path, clips: dict[str, Any], out: Path, transcriber: Transcriber
) -> dict[str, Any]:
    """One run's FDB metrics from its speaker.wav, with the events' account beside them; a cut-in's own
    figures too, beside the words the same whisper keeps of its clip transcribed alone (device_soak.py's
    comparison: what the run adds or loses)."""
    transcribe = whisper_words(transcriber)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    events = [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    speaker = read_wav(out / "speaker.wav").samples
    times = cue_times(report, case, clips)
    category, last = case["category"], case["cues"][-1]
    row: dict[str, Any] = {"case": case["name"], "voice": case["voice"], "said": clips[last["clip"]]["text"]}
    if times[-1] is None:
        return row | {"error": "the room never placed the last cue (the reply it waits for never played)"}
    onset, end = times[-1]
    if category == "pause_handling":
        clip = clips[last["clip"]]
        pause_s = round(clip["pause_end_s"] - clip["pause_start_s"], 2)
        return row | {"pause_s": pause_s, **fdb.pause_handling(speaker, end, transcribe)}
    if category == "smooth_turn_taking":
        return row | fdb.smooth_turn_taking(speaker, end, transcribe)
    over = fdb.OverReply(onset, end, case["replies"][0], case["replies"][1])
    if category == "backchannel":
        found = fdb.backchannel(speaker, over, transcribe)
        return row | found | {"talked_through": talked_through(found), "events": events_after(events, onset)}
    found = fdb.user_interruption(speaker, over, transcribe)
    found |= cut_in_outcome(report, events, speaker, row["said"], onset, found["stop_ms"])
    alone = transcriber.transcribe(read_wav(folder / "clips" / f"{last['clip']}.wav")).text
    found |= {"yielded": yielded(found), "words_kept_alone": words_kept(row["said"], alone)["words_kept"]}
    return row | found | {"events": events_after(events, onset)}


def summary(category: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A category's figures over its cases (those that ran)."""
    ran = [row for row in rows if "tor" in row]
    found: dict[str, Any] = {"n": len(ran), "tor": fdb.share([row["tor"] for row in ran])}
    if len(ran) < len(rows):
        found["not_run"] = [row["case"] for row in rows if "tor" not in row]
    if category == "pause_handling":
        pauses = sorted({row["pause_s"] for row in ran})
        found["tor_by_pause_s"] = {
            str(p): fdb.share([r["tor"] for r in ran if r["pause_s"] == p]) for p in pauses
        }
        found["reply_sound_before_user_end"] = sum(row["reply_sound_before_user_end"] for row in ran)
    elif category == "backchannel":
        found["went_on"] = fdb.share([row["went_on"] for row in ran])
        resumed = [row["gap_ms"] for row in ran if row["went_on"] and row["gap_ms"] is not None]
        found["gap_ms"] = fdb.spread(resumed)
        found["gap_ms_all"] = fdb.spread([row["gap_ms"] for row in ran if row["gap_ms"] is not None])
        found["events"] = {
            key: sum(row["events"][key] for row in ran) for key in ("requests", "interrupted", "backchannels")
        }
        found["s_bc"] = fdb.share([row["talked_through"] for row in ran])
    elif category == "smooth_turn_taking":
        found["latency_s"] = fdb.spread([row["latency_s"] for row in ran if row["latency_s"] is not None])
        found["first_sound_latency_s"] = fdb.spread(
            [row["first_sound_latency_s"] for row in ran if row["first_sound_latency_s"] is not None]
        )
    else:
        found["latency_s"] = fdb.spread([row["latency_s"] for row in ran if row["latency_s"] is not None])
        found["answered"] = fdb.share([row["answered"] for row in ran])
        found["stop_ms"] = fdb.spread([row["stop_ms"] for row in ran if row["stop_ms"] is not None])
        found["new_sound_latency_s"] = fdb.spread(
            [row["new_sound_latency_s"] for row in ran if row["new_sound_latency_s"] is not None]
        )
        found |= cut_in_summary(ran)
    return found


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    started = time.monotonic()
    load_start = os.getloadavg()[0]
    folder = ensure_cases()
    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
    clips = json.loads((folder / "clips.json").read_text(encoding="utf-8"))
    chosen, taken = [], dict.fromkeys(args.category, 0)
    for case in cases:
        if case["category"] in taken and (args.cases is None or taken[case["category"]] < args.cases):
            chosen.append(case)
            taken[case["category"]] += 1
    print("loading whisper, piper and Smart Turn...", file=sys.stderr, flush=True)
    models = load_speech_models()
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in args.category if c not in BYSTANDERS}
    bystanders: dict[str, dict[str, list[dict[str, Any]]]] = {
        speaker: {c: [] for c in args.category if c in BYSTANDERS} for speaker in args.speaker
    }
    for case in chosen:
        settings = args.speaker if case["category"] in BYSTANDERS else args.speaker[:1]
        for speaker in settings:
            out = work / speaker / case["category"] / case["name"]
            out.mkdir(parents=True)
            scenario = load_scenario(folder / case["scenario"])
            run = {"realtime": args.realtime, "eagerness": args.eagerness, "speaker": speaker}
            run_scenario(scenario, out, models=models, **run)
            elapsed = time.monotonic() - started
            if case["category"] in BYSTANDERS:
                row = score_bystander(case, folder, clips, out, models.transcriber)
                bystanders[speaker][case["category"]].append(row)
                said = f"ignored {row.get('ignored')}, {row.get('behaviour')}, user {row.get('user')}"
            else:
                row = score(case, folder, clips, out, models.transcriber)
                rows[case["category"]].append(row)
                cut = f", yielded {row['yielded']}, kept {row['words_kept']}" if "yielded" in row else ""
                said = f"tor {row.get('tor')}{cut}"
            print(f"[{elapsed:6.1f} s] {speaker} {case['category']} {case['name']}: {said}", file=sys.stderr)
    return {
        "scorecard": {category: summary(category, found) for category, found in rows.items()},
        "speaker": args.speaker[0],
        "bystanders": {
            speaker: {category: bystander_summary(found) for category, found in by_category.items()}
            | {"all": bystander_summary([row for found in by_category.values() for row in found])}
            for speaker, by_category in bystanders.items()
            if by_category
        },
        "differences_from_fdb_v1_5_and_tau_voice_s_nd": list(BYSTANDER_DIFFERENCES),
        "published_tau_voice_s_nd": TAU_VOICE_BYSTANDERS,
        "bystander_cases": bystanders,
        "realtime": args.realtime,
        "eagerness": (args.eagerness or Eagerness.AUTO).value,
        "cases_folder": str(folder),
        "voice_package": str(Path(voice.__file__).parent),
        "load_1min": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
        "wall_s": round(time.monotonic() - started, 1),
        "differences_from_fdb": list(DIFFERENCES),
        "published": PUBLISHED,
        "tau_voice": selectivity(
            [row for category in CUT_INS for row in rows.get(category, []) if "yielded" in row],
            [row for row in rows.get("backchannel", []) if "talked_through" in row],
        ),
        "differences_from_tau_voice": list(TAU_VOICE_DIFFERENCES),
        "published_tau_voice": TAU_VOICE_PUBLISHED,
        "cases": rows,
    }


def before_argv(argv: list[str], out: Path | None) -> list[str]:
    """This run's arguments for TREE's run: no --against, and its outputs in OUT/before."""
    kept = without_option(without_against(argv), "--out")
    return kept + ([] if out is None else ["--out", str(out / "before")])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--realtime", action="store_true", help="pace by the wall clock: latencies are real")
    parser.add_argument("--cases", type=int, help="only the first N cases of each category")
    parser.add_argument(
        "--category",
        action="extend",
        nargs="+",
        choices=CATEGORIES,
        help="only these categories (NAME ..., or the option again)",
    )
    parser.add_argument("--eagerness", type=parse_eagerness, help="low, auto or high (default: auto)")
    parser.add_argument(
        "--speaker",
        nargs="+",
        choices=SPEAKERS,
        help="[turn] speaker: the bystander categories run once with each, the others with the first "
        "(default: conversation and anyone; the others with anyone)",
    )
    parser.add_argument("--out", type=Path, help="keep every run, scorecard.json and table.md here")
    parser.add_argument("--against", type=Path, help="another source tree to run first, for before/after")
    args = parser.parse_args()
    args.category = tuple(args.category or CATEGORIES)
    args.speaker = tuple(args.speaker or ("anyone", "conversation"))
    ensure_cases()  # made once, before TREE's run, so both play the same cases
    before = None
    if args.against is not None:
        before = run_against(args.against, __file__, before_argv(sys.argv[1:], args.out))
    if args.out is not None:
        after_out = args.out / "after" if args.against is not None else args.out
        after_out.mkdir(parents=True, exist_ok=True)
        after = measure(args, after_out / "runs")
    else:
        with tempfile.TemporaryDirectory(prefix="full-duplex-") as folder:
            after = measure(args, Path(folder))
    printed = with_cpu(
        after if before is None else {"before": {"tree": str(args.against), **before}, "after": after}
    )
    text = table(after, before, PUBLISHED, TAU_VOICE_PUBLISHED, TAU_VOICE_BYSTANDERS)
    print(json.dumps(printed, indent=2))
    print(text, file=sys.stderr)
    if args.out is not None:
        (args.out / "scorecard.json").write_text(json.dumps(printed, indent=2) + "\n", encoding="utf-8")
        (args.out / "table.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
