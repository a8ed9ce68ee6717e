"""What a device soak did (benchmarks/device_soak.py), from what its ``Script`` played and the stream
recorded: turns against the WAVs that asked for one, self-interruptions, each cut-in's words and reaction,
what the backchannels did, and the time each mic block took."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from common.cut_in_outcome import words_kept
from common.harness import spread
from common.mic_echo import AUDIO, RecordingCanceller, found_in_mic
from common.soak_script import Played, Script, cut_at, mic_clock, samples, turns_so_far
from common.word_error import wer
from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.wav import read_wav
from voice.engine.overlap import Overlap, OverlapPhrases
from voice.recorder import RecordedTurn
from voice.speaker.encoder import cosine
from voice.speaker.weights import Tensor

BACKCHANNEL_SLACK_S = 3.0  # a cut this long after a backchannel's end is still put down to it


def block_summary(block_ms: np.ndarray[Any, np.dtype[np.float64]]) -> dict[str, float]:
    """Time to handle one mic block (AEC, VAD, engine, log), over the blocks kept."""
    return {
        "n": int(block_ms.size),
        "p50": round(float(np.percentile(block_ms, 50)), 2),
        "p95": round(float(np.percentile(block_ms, 95)), 2),
        "max": round(float(block_ms.max()), 2),
    }


def analyse(script: Script, manifest: dict[str, dict[str, Any]], alone: dict[str, str]) -> dict[str, Any]:
    recorder, rate = script.recorder, ENGINE_RATE
    utterances = [(samples(s.start_s), s.transcript) for s in recorder.utterances()]
    all_turns = recorder.answered()

    def span(play: Played) -> tuple[int, int]:
        """Mic clock samples while the WAV could be heard (half a second of slack at the end, more for a
        backchannel: the whole of what it did lies past its short self when the loop runs behind)."""
        slack_s = BACKCHANNEL_SLACK_S if play.backchannel else 0.5
        return play.clock, play.clock + round((manifest[play.wav]["duration_s"] + slack_s) * rate)

    def during(play: Played, sample: int) -> bool:
        lo, hi = span(play)
        return lo <= sample <= hi

    delays = []  # paplay launch + the WAV's speech start → the VAD's onset, on the quiet questions
    for play in (p for p in script.played if p.phase == "quiet"):
        starts = [start for start, _ in utterances if during(play, start)]
        if starts:
            delays.append(starts[0] - play.clock - manifest[play.wav]["start_s"] * rate)
    delay = statistics.median(delays) if delays else 0.0
    cut = [mic_clock(script, t.turn, t.audio_end_s) for t in all_turns if t.interrupted and t.audio_end_s]
    rows: list[dict[str, Any]] = []
    for play in (p for p in script.played if p.interruption):
        heard = " ".join(text or "" for start, text in utterances if during(play, start)).strip()
        onset = play.clock + manifest[play.wav]["start_s"] * rate + delay
        ends = [end for end in cut if during(play, end)]
        text = manifest[play.wav]["text"]
        kept = words_kept(text, heard)
        rows.append({
            "wav": play.wav, "phase": play.phase, "heard": heard, "wer": round(wer(text, heard), 2),
            "wer_alone": round(wer(text, alone[play.wav]), 2),
            "words_kept": kept["words_kept"], "extra_words": kept["extra_words"],
            "words_kept_alone": words_kept(text, alone[play.wav])["words_kept"],
            "reaction_ms": round((ends[0] - onset) * 1000 / rate) if ends else None,
        })  # fmt: skip

    def phase_of(turn: RecordedTurn) -> str | None:
        """The stretch a turn was asked in: that of the last WAV played before its request."""
        asked = script.turn_clock.get(turn.turn)
        before = [p for p in script.played if asked is not None and p.clock <= asked]
        return before[-1].phase if before else None

    stops = OverlapPhrases()

    def asks_a_turn(play: Played) -> bool:
        """A question or a cut-in: not a listener's word, nor a stop phrase, which cut and ask nothing."""
        return not play.backchannel and stops.verdict(manifest[play.wav]["text"]) is not Overlap.STOP

    by_phase: dict[str, dict[str, Any]] = {}
    for phase in ("quiet", "interruptions", "backchannels"):
        plays = [p for p in script.played if p.phase == phase and asks_a_turn(p)]
        if not plays:
            continue
        turns = [t for t in all_turns if phase_of(t) == phase]
        # a cut with no WAV playing when it happened is the assistant stopping on its own voice
        selfcut = [
            t for t in turns if t.interrupted and not any(during(p, cut_at(script, t)) for p in script.played)
        ]
        by_phase[phase] = {
            "wavs_played": sum(p.phase == phase and not p.backchannel for p in script.played),
            "turns": len(turns),
            "expected_turns": len(plays),
            "turns_per_expected": round(len(turns) / len(plays), 2),
            "self_interruptions": len(selfcut),
            "interruptions_that_cut": sum(r["reaction_ms"] is not None for r in rows if r["phase"] == phase),
            "reaction_ms": spread(
                [r["reaction_ms"] for r in rows if r["phase"] == phase and r["reaction_ms"] is not None]
            ),
            "false_barge_ins": sum(t.false_barge_ins for t in turns),
        }
    unprompted = [text for start, text in utterances if not any(during(p, start) for p in script.played)]
    reactions = [r["reaction_ms"] for r in rows if r["reaction_ms"] is not None]
    asking = [p for p in script.played if asks_a_turn(p)]
    found = {
        "phases": by_phase,
        "turns": turns_so_far(recorder),
        "expected_turns": len(asking),
        "turns_per_expected": round(turns_so_far(recorder) / max(1, len(asking)), 2),
        "interruptions_played": len(rows),
        "interruption_wer": round(statistics.fmean(r["wer"] for r in rows), 3) if rows else None,
        "interruption_wer_alone": round(statistics.fmean(r["wer_alone"] for r in rows), 3) if rows else None,
        "reaction_ms": spread(reactions),
        "onset_delay_ms": round(delay * 1000 / rate, 1),
        "heard_without_a_wav": unprompted[:30],
        "interruptions": rows,
        "played": [[p.wav, p.phase, round(p.clock / rate, 2)] for p in script.played],
        "utterances": [[round(start / rate, 2), text] for start, text in utterances],
    }
    if any(p.backchannel for p in script.played):
        found["backchannels"] = backchannel_outcomes(script, manifest, span)
    for kind, of_kind in (("opening_cut_ins", True), ("plain_cut_ins", False)):
        picked = [
            r for r in rows if r["phase"] == "backchannels" and (r["wav"] in script.over.openers) == of_kind
        ]
        if script.over.openers and picked:
            found[kind] = cut_in_figures(picked)
    return found


def cut_in_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What reached the transcript of these cut-ins, beside the same WAVs heard alone, and their reaction."""
    return {
        "played": len(rows),
        "words_kept": round(statistics.fmean(r["words_kept"] for r in rows), 3),
        "words_kept_alone": round(statistics.fmean(r["words_kept_alone"] for r in rows), 3),
        "extra_words": sum(r["extra_words"] for r in rows),
        "wer": round(statistics.fmean(r["wer"] for r in rows), 3),
        "wer_alone": round(statistics.fmean(r["wer_alone"] for r in rows), 3),
        "reaction_ms": spread([r["reaction_ms"] for r in rows if r["reaction_ms"] is not None]),
    }


def backchannel_outcomes(
    script: Script, manifest: dict[str, dict[str, Any]], span: Callable[[Played], tuple[int, int]]
) -> dict[str, Any]:
    """What the backchannels did: replies they cut and requests they sent (issue 36: none of either), each
    put down to the last WAV played before it, with what the stream said of them beside."""

    def last_play(sample: int) -> Played | None:
        before = [p for p in script.played if p.clock <= sample]
        return before[-1] if before else None

    def caused(sample: int | None) -> Played | None:
        """The backchannel played last before ``sample``, if ``sample`` lies within its span."""
        play = None if sample is None else last_play(sample)
        if play is None or not play.backchannel or sample is None or sample > span(play)[1]:
            return None
        return play

    turns = script.recorder.answered()
    cuts = [cut_at(script, t) for t in turns if t.interrupted and t.audio_end_s]
    cut = [caused(at) for at in cuts]
    asked = [last_play(script.turn_clock[t.turn]) for t in turns if t.turn in script.turn_clock]
    requests = [p for p in asked if p is not None and p.backchannel]
    plays = [p for p in script.played if p.backchannel]
    heard = [
        s.transcript
        for s in script.recorder.utterances()
        if s.transcript and caused(samples(s.start_s)) is not None
    ]
    pauses = [
        round((resumed - paused) * 1000)
        for paused, resumed in script.watch.pauses
        if resumed is not None and caused(samples(paused)) is not None
    ]
    texts = sorted({manifest[p.wav]["text"] for p in plays})
    return {
        "played": len(plays),
        "replies_cut": sum(p is not None for p in cut),
        "requests": len(requests),
        "by_text": {
            text: {
                "played": sum(manifest[p.wav]["text"] == text for p in plays),
                "cut": sum(p is not None and manifest[p.wav]["text"] == text for p in cut),
                "requests": sum(manifest[p.wav]["text"] == text for p in requests),
            }
            for text in texts
        },
        "heard_as_input": heard[:30],
        "cuts": [  # each cut in a backchannels stretch: its barge-in, and the WAV played last before it
            [round(at / ENGINE_RATE, 2), None if last is None else last.wav]
            for at in cuts
            if (last := last_play(at)) is not None and last.phase == "backchannels"
        ],
        "input_backchannel_events": script.watch.backchannels,
        "pause_to_resume_ms": spread([float(ms) for ms in pauses]),
    }


def speaker_scores(
    script: Script,
    manifest: dict[str, dict[str, Any]],
    canceller: RecordingCanceller,
    embed: Callable[[Samples], Tensor | None],
) -> dict[str, Any]:
    """The speaker verdict's scores offline, through the loop beside clean: each user WAV's speech found in
    the mic by correlation and taken from what the echo canceller passed on, scored against a print of the
    first question as it came through; the same WAVs as written against the first one's; and 2 s windows
    of the television alone (no user WAV within 1 s), through the loop and as written, against each print.
    Quartiles of the cosine similarities (the verdict's threshold is SAME_SPEAKER)."""
    rate = ENGINE_RATE
    mic, cleaned = np.concatenate(canceller.mic), np.concatenate(canceller.cleaned)
    looped, clean = list[Samples](), list[Samples]()
    busy = list[tuple[int, int]]()
    for play in script.played:
        entry = manifest[play.wav]
        wav = read_wav(Path(entry.get("path", AUDIO / play.wav))).samples
        where = found_in_mic(mic, wav, play.clock)
        if where is None:
            continue
        start, end = round(entry["start_s"] * rate), round(entry["end_s"] * rate)
        looped.append(cleaned[where[0] + start : where[0] + end])
        clean.append(wav[start:end])
        busy.append((where[0] + start - rate, where[0] + end + rate))
    tv: list[Samples] = []
    if script.television is not None and script.television_from is not None:
        written = read_wav(script.television).samples
        for at in range(script.television_from + rate, len(cleaned) - 2 * rate, 2 * rate):
            if not any(a < at + 2 * rate and at < b for a, b in busy):
                tv.append(cleaned[at : at + 2 * rate])
                tv.append(written[at - script.television_from : at - script.television_from + 2 * rate])
    if not looped:
        return {}

    looped_print, clean_print = embed(looped[0]), embed(clean[0])  # each print embedded once, used twice

    def quartiles(enrolled: Tensor | None, stretches: list[Samples]) -> dict[str, Any]:
        scores = [
            cosine(enrolled, e) for e in map(embed, stretches) if e is not None and enrolled is not None
        ]
        q = np.percentile(scores, [0, 25, 50, 75, 100]) if scores else []
        return {"n": len(scores), "min_q1_median_q3_max": [round(float(x), 3) for x in q]}

    return {
        "user_through_the_loop": quartiles(looped_print, looped[1:]),
        "user_as_written": quartiles(clean_print, clean[1:]),
        "television_through_the_loop": quartiles(looped_print, tv[0::2]),
        "television_as_written": quartiles(clean_print, tv[1::2]),
    }
