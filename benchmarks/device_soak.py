"""Device-loop soak: one assistant on a private PulseAudio null sink (a 0 dB echo loop), printed as JSON.

The speaker's null sink is the microphone's monitor, so every word the assistant says comes straight
back on the mic, as from loud desktop speakers. A scripted model tells a long story to every question
and a short "Okay" to a question that cut it off; the user's WAVs are played into the same sink with
paplay. For ``--minutes``, in one process, stretches of ``--stretch-minutes`` of two kinds alternate:

- ``quiet``: questions only, each asked once the previous story has played out.
  Any interrupted turn here is the assistant cutting itself off on its own echo.
- ``interruptions``: a question, then ``--after-s`` into its story an interruption WAV cuts in.
- ``backchannels`` (with ``--backchannels``, a third kind, between the two): a question, then over its
  story ``--backchannels-per-reply`` listener's backchannels ("yeah", "okay", "mm-hmm"... in the held-out
  espeak-ng voices of benchmarks/cases/full_duplex_cases.py), one every ``--backchannel-every-s`` from
  ``--after-s`` on, then a real cut-in as many seconds after the last. Reported under ``backchannels``: the
  replies they cut and the requests they sent (issue 36: none of either), what the stream said of them;
  the cut-ins' reaction under ``phases`` and ``interruptions``, beside the interruptions stretch's. With
  ``--opening-cut-ins`` every other such cut-in opens with a listener's word and a breath ("Yeah, ... but
  what happens on Thursday?", full_duplex.py's held-out cases, issue 45); each interruption's row says what
  of its words reached the transcript (``words_kept``, ``extra_words``).

Reported: ``turns`` against ``expected_turns`` (one per WAV played that asks one, so not for a stop
phrase; 1.00 means no self-interruption), ``self_interruptions`` (interrupted turns nobody interrupted),
the interrupting utterances' WER against the same WAVs transcribed alone, the reaction (estimated: the
WAV's speech onset is placed on the mic clock with the paplay-to-VAD delay measured on the quiet
questions, so it is approximate to a block or two), the device counters (overflows, underflows,
re-alignments) and RSS and malloc's in-use and kept memory every ``--rss-every-s`` (to tell a warm-up that
levels off from growth that does not).
``--true-reaction`` measures each cut-in's reaction in what the mic really captured.
``--television DB`` takes turns only from the conversation's speaker (``[turn] speaker = "conversation"``),
and once the first question is answered, plays a television into the same sink to the end: a real reader of
audio/real/ (the Austen reader, held out from the speaker verdict's tuning), reverberated, ``DB`` under the
questions' speech level, talking on. A cut it makes has no WAV of the user's playing, so it counts as a
``self_interruptions``; its answers show in ``turns_per_expected``; ``television`` says what was ignored.
``--trace-every-min`` also compares tracemalloc snapshots and live objects by type against the first,
taken at ``--trace-from-min``, to say which lines of Python hold what grew.

Usage: python benchmarks/device_soak.py [--minutes 60] [--stretch-minutes 5] [--after-s 2.5]
       [--out FILE] [--true-reaction] [--trace-every-min 10] [--against TREE]   (twice as long with
       --against, which soaks TREE's voice package first and prints {"before": ..., "after": ...})
       [--backchannels [--backchannels-per-reply 3] [--backchannel-every-s 3.5]] [--television 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from common.cut_in_outcome import words_kept
from common.harness import print_measured, spread
from common.mic_echo import RecordingCanceller, echo_lag, true_reactions
from common.process_memory import NativeWindow, PythonGrowth, malloc_mb, memory_summary, quiet_summary, rss_mb
from common.word_error import wer

import voice
from voice.allocator import keep_malloc_flat
from voice.audio import devices as sound_devices
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.devices import rescan_devices
from voice.audio.playback import PlaybackBuffer
from voice.audio.pulse import private_pulse
from voice.audio.wav import read_wav, write_wav
from voice.cancel import CancelToken
from voice.chat import driver
from voice.chat.driver import (
    DeviceConversation,
    DeviceSettings,
    OpenOutput,
    default_echo_canceller,
    device_openers,
)
from voice.client_events import Failure, StateChanged, StreamEvent
from voice.components import load_speech_models, make_engine, telling_voices_apart
from voice.conversation.items import AssistantText
from voice.duplex import AudioOutput
from voice.engine.overlap import Overlap, OverlapPhrases
from voice.llm.port import ChatEvent, ChatRequest, ChatSettings, Finished, TextDelta
from voice.recorder import RecordedTurn, Recorder
from voice.runtime import ChatModelThinker, Work
from voice.sim.room import reverberated, under

AUDIO = Path(__file__).resolve().parents[1] / "audio"
BLOCK_TIMES_KEPT = 200_000  # the latest mic blocks timed (over 2 hours of 40 ms blocks)
QUESTIONS = ("fox-story.wav", "what-weather.wav", "what-weekend.wav", "check-sunday.wav")
INTERRUPTIONS = ("sorry-sunday.wav", "wait-stop.wav", "what-wear.wav", "thanks-all.wav", "hello-there.wav")
STORY = (
    "Once upon a time, an old grey fox lived alone on a snowy hill above a quiet valley. "
    "Each winter night he sat outside his den, listened to the owls in the pine trees, and counted the "
    "stars one by one until the sky turned pale. There was a little river at the foot of the hill, and "
    "in the spring it grew loud and fast with melted snow. The fox liked to walk along its bank in the "
    "early morning, when the grass was wet and the birds were only starting to sing. One morning he met "
    "a young hare who had lost her way, and instead of chasing her, he showed her the path back to the "
    "meadow. From that day on the two of them met by the river every week, and they talked about the "
    "weather, the seasons, and the strange noises that came from the farm on the other side of the "
    "valley. When summer came, the fox finally went down to the village to see the farm for himself, "
    "and he found that the noises were only an old tractor that coughed every time it started."
)
SHORT = "Okay, I will stop there."
IDLE_BEFORE_NEXT_S = 1.5
QUIET_BEFORE_SAMPLE_S = 1.0  # listening, nothing queued to play, this long: no call's buffers are held
STUCK_S = 150.0  # a story that never ends (the assistant keeps restarting it) must not stall the script
WORD_DELAY_S = 0.03
BACKCHANNEL_SLACK_S = 3.0  # a cut this long after a backchannel's end is still put down to it


class HandedOut:
    """Every block handed to the speaker, on the speaker's clock (audio a device later silenced too)."""

    def __init__(self) -> None:
        self.blocks: list[AudioBlock] = []

    def played(self, block: AudioBlock) -> None:
        self.blocks.append(AudioBlock(block.samples.copy(), block.rate, block.start))

    def speaker(self, devices: DeviceSettings) -> OpenOutput:
        """The real speaker of ``devices``, telling this of every block it hands out too."""
        _, open_output = device_openers(devices)

        def opened(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
            def played(block: AudioBlock) -> None:
                self.played(block)
                on_played(block)

            return open_output(buffer, played)

        return opened

    def signal(self) -> Samples:
        end = max((block.end for block in self.blocks), default=0)
        out = np.zeros(end, dtype=np.float32)
        for block in self.blocks:
            out[block.start : block.end] = block.samples
        return out


class Speakers:
    """The speakers opened, to count how often their streams stopped while the conversation was idle."""

    def __init__(self) -> None:
        self.opened: list[AudioOutput] = []

    def opener(self, open_output: OpenOutput) -> OpenOutput:
        def opened(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
            speaker = open_output(buffer, on_played)
            self.opened.append(speaker)
            return speaker

        return opened

    @property
    def rests(self) -> int:
        return sum(getattr(speaker, "rests", 0) for speaker in self.opened)  # a tree before rests: 0


class StoryModel:
    """A ChatModel that tells STORY, or says SHORT when the user has just cut the previous reply off."""

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        cut = len(request.items) >= 2 and isinstance(request.items[-2], AssistantText)
        cut = cut and request.items[-2].interrupted  # type: ignore[union-attr]
        for word in (SHORT if cut else STORY).split(" "):
            if cancel.wait(WORD_DELAY_S):
                yield Finished("cancelled")
                return
            yield TextDelta(word + " ")
        yield Finished("stop")


@dataclass
class Played:
    """One user WAV played into the sink: where on the mic clock, and in which phase."""

    wav: str
    phase: str
    clock: int
    interruption: bool
    backchannel: bool = False


@dataclass(frozen=True)
class OverStory:
    """What is played over each story: in an ``interruptions`` stretch one cut-in ``after_s`` into it, in a
    ``backchannels`` one ``per_reply`` backchannels ``every_s`` apart from then on, and then the cut-in."""

    after_s: float
    backchannels: tuple[str, ...] = ()  # WAVs to take in turn; none: no backchannels stretch
    per_reply: int = 0
    every_s: float = 0.0
    openers: tuple[
        str, ...
    ] = ()  # cut-ins opening with a listener's word, every other one after backchannels

    @property
    def phases(self) -> tuple[str, ...]:
        """The kinds of stretch, in the order they take turns."""
        return ("quiet", "backchannels", "interruptions") if self.backchannels else ("quiet", "interruptions")


class BackchannelWatch:
    """From the stream: when each pause of a reply began and when it went on (None: it never did, the reply
    was cut), and how many ``input.backchannel`` events came (issue 36's; a tree without them sends none)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float | None]] = []
        self.backchannels = 0
        self._open = False  # paused, and neither gone on nor cut yet (transcribing keeps it open)

    def see(self, event: StreamEvent) -> None:
        if event.type == "input.backchannel":
            self.backchannels += 1
        elif isinstance(event, StateChanged) and event.state == "paused":
            self.pauses.append((event.t, None))
            self._open = True
        elif self._open and isinstance(event, StateChanged) and event.state == "speaking":
            self.pauses[-1] = (self.pauses[-1][0], event.t)
            self._open = False
        elif self._open and (event.type == "response.interrupted" or isinstance(event, StateChanged)):
            self._open = event.type == "state" and event.state in ("paused", "thinking")


@dataclass
class Script:
    """Plays the user's WAVs at the right moments, judged from the stream (recorded) between mic blocks."""

    talk: DeviceConversation
    recorder: Recorder
    soak_s: float
    stretch_s: float
    over: OverStory
    env: dict[str, str]
    limit_s: float
    paths: dict[str, Path] = field(default_factory=dict)  # a WAV not in audio/: where it is
    played: list[Played] = field(default_factory=list)
    began: float = field(default_factory=time.monotonic)
    idle_since: float | None = None
    last_play: float = 0.0
    interrupted_turn: int | None = None
    story_turn: int = 0  # the turn answering the last question (backchannels go over no other)
    player: subprocess.Popen[bytes] | None = None
    done: bool = False
    turn_clock: dict[int, int] = field(default_factory=dict)  # when each turn's request was sent
    # the engine stamps heard audio on the speaker's clock: how far it runs from the mic's, per turn
    output_ahead: dict[int, int] = field(default_factory=dict)
    reported: int = -1  # start sample of the last utterance printed as progress
    watch: BackchannelWatch = field(default_factory=BackchannelWatch)
    television: Path | None = None  # played from the first answer on, to the end
    television_player: subprocess.Popen[bytes] | None = None
    television_from: int | None = None  # its start on the mic clock

    def play(self, wav: str, phase: str, interruption: bool, backchannel: bool = False) -> None:
        self.player = subprocess.Popen(["paplay", str(self.paths.get(wav, AUDIO / wav))], env=self.env)
        self.played.append(Played(wav, phase, self.talk.clock, interruption, backchannel))
        if not interruption and not backchannel:
            self.story_turn = turns_so_far(self.recorder) + 1
        self.last_play = time.monotonic()
        self.idle_since = None
        count = sum(p.interruption for p in self.played)
        print(f"  {time.monotonic() - self.began:6.1f}s {phase}: {wav} (turns {turns_so_far(self.recorder)},"
              f" interruptions {count})", file=sys.stderr, flush=True)  # fmt: skip

    def television_on(self) -> None:
        """The television comes on once the first question is answered (it must not be the one enrolled)."""
        if self.television is None or self.television_player is not None:
            return
        if any(turn.ended for turn in self.recorder.turns.values()):
            self.television_player = subprocess.Popen(["paplay", str(self.television)], env=self.env)
            self.television_from = self.talk.clock
            print(
                f"  {time.monotonic() - self.began:6.1f}s the television comes on",
                file=sys.stderr,
                flush=True,
            )

    def tick(self) -> None:
        self.television_on()
        now = time.monotonic()
        for turn in self.recorder.turns.values():
            self.turn_clock.setdefault(turn.turn, self.talk.clock)
            if turn.audio_start_s is not None and turn.turn not in self.output_ahead:
                self.output_ahead[turn.turn] = samples(turn.audio_start_s) - self.talk.clock
        for speech in self.recorder.speech:  # follow them by their start
            start = samples(speech.start_s)
            if start <= self.reported or speech.transcript is None or speech.end_s is None:
                continue
            self.reported = start
            at, voiced = speech.start_s, speech.end_s - speech.start_s
            counters = self.talk.device_counters()
            line = f"heard {speech.transcript!r} at {at:.2f}s, voiced {voiced:.2f}s; {counters}"
            print(f"  {now - self.began:6.1f}s {line}", file=sys.stderr, flush=True)
        if self.player is not None and self.player.poll() is None:
            return
        idle = self.talk.runner.state == "listening"
        self.idle_since = (self.idle_since or now) if idle else None
        rested = self.idle_since is not None and now - self.idle_since >= IDLE_BEFORE_NEXT_S
        stuck = now - self.last_play >= STUCK_S
        questions = sum(not p.interruption and not p.backchannel for p in self.played)
        phases = self.over.phases
        phase = phases[int((now - self.began) / self.stretch_s) % len(phases)]
        if now - self.began >= self.limit_s:
            self.done = True  # a runaway never rests: report what it did in the time given
            return
        if now - self.began >= self.soak_s:
            self.done = rested or stuck
            return
        if rested or stuck:
            self.play(QUESTIONS[questions % len(QUESTIONS)], phase, interruption=False)
            return
        latest = max(self.recorder.turns.values(), key=lambda t: t.turn, default=None)
        if (
            phase != "quiet"
            and latest is not None
            and not latest.ended
            and latest.turn != self.interrupted_turn
            and latest.turn in self.output_ahead
            and self.played[-1].phase == phase  # not a quiet stretch's story still playing
            and not self.played[-1].interruption
            and (phase != "backchannels" or latest.turn == self.story_turn)  # not "Okay, I will stop"
        ):
            self.over_story(latest.turn, latest.audio_start_s, phase)

    def over_story(self, turn: int, audio_start_s: float | None, phase: str) -> None:
        """Over the story of ``turn``: each backchannel when it is due, then the cut-in."""
        story_s = (self.talk.clock - mic_clock(self, turn, audio_start_s)) / ENGINE_RATE
        said = 0
        for play in reversed(self.played):
            if not play.backchannel:
                break
            said += 1
        since_s = (self.talk.clock - self.played[-1].clock) / ENGINE_RATE
        due = story_s >= self.over.after_s if not said else since_s >= self.over.every_s
        if not due:
            return
        if phase == "backchannels" and said < self.over.per_reply:
            count = sum(p.backchannel for p in self.played)
            wav = self.over.backchannels[count % len(self.over.backchannels)]
            self.play(wav, phase, interruption=False, backchannel=True)
            return
        self.interrupted_turn = turn
        count = sum(p.interruption for p in self.played)
        after_backchannels = sum(p.interruption and p.phase == "backchannels" for p in self.played)
        if phase == "backchannels" and self.over.openers and after_backchannels % 2:
            opener = self.over.openers[after_backchannels // 2 % len(self.over.openers)]
            self.play(opener, phase, interruption=True)
            return
        self.play(INTERRUPTIONS[count % len(INTERRUPTIONS)], phase, interruption=True)


def samples(seconds: float) -> int:
    return round(seconds * ENGINE_RATE)


def mic_clock(script: Script, turn: int, output_s: float | None) -> int:
    """An output-clock time of ``turn`` placed on the mic's clock (to the block it was first seen)."""
    return samples(output_s or 0.0) - script.output_ahead.get(turn, 0)


def cut_at(script: Script, turn: RecordedTurn) -> int:
    """When the speech that cut ``turn`` began, on the mic clock: its barge-in (already on that clock), or
    for a turn cut with none, its audio's end moved over from the speaker's clock (which underflows move)."""
    if turn.barge_in_s is not None:
        return samples(turn.barge_in_s)
    return mic_clock(script, turn.turn, turn.audio_end_s)


def turns_so_far(recorder: Recorder) -> int:
    """Requests made so far (turns count from 1)."""
    return max(recorder.turns, default=0)


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


def television(folder: Path, under_db: float, seconds: float) -> Path:
    """A WAV of a television talking on for ``seconds``, ``under_db`` under the questions' speech level."""
    clips = [read_wav(AUDIO / "real" / f"austen_{n}.wav").samples for n in (870, 880, 890, 920, 930)]
    reading = np.concatenate(clips)
    reading = np.tile(reading, int(seconds * ENGINE_RATE // len(reading)) + 1)
    path = folder / "television.wav"
    level_of = read_wav(AUDIO / QUESTIONS[0]).samples
    write_wav(path, AudioBlock(under(reverberated(reading), level_of, under_db), ENGINE_RATE))
    return path


def case_clips(category: str, role: str) -> dict[str, dict[str, Any]]:
    """The clips of benchmarks/full_duplex.py's cases (held-out voices) of ``category`` said in ``role``, as
    manifest entries."""
    from cases.full_duplex_cases import ensure_cases  # only these modes need espeak-ng (and the cases' cache)

    folder = ensure_cases()
    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
    clips = json.loads((folder / "clips.json").read_text(encoding="utf-8"))
    names = [
        cue["clip"]
        for case in cases
        if case["category"] == category
        for cue in case["cues"]
        if cue["role"] == role
    ]
    return {
        f"{name}.wav": clips[name] | {"file": f"{name}.wav", "path": str(folder / "clips" / f"{name}.wav")}
        for name in names
    }


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    manifest = {f["file"]: f for f in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
    if args.system_malloc or not keep_malloc_flat():  # as `voice chat` does, before any thread starts
        print("glibc malloc left as it is", file=sys.stderr, flush=True)
    with private_pulse(folder / "pulse") as server:
        os.environ["PULSE_SERVER"] = server
        rescan_devices()
        print("loading whisper and piper...", file=sys.stderr, flush=True)
        models = load_speech_models()
        alone = {wav: models.transcriber.transcribe(read_wav(AUDIO / wav)).text for wav in INTERRUPTIONS}
        work = Work(threaded=True)
        speaker = "anyone" if args.television is None else "conversation"
        models = telling_voices_apart(models, speaker)
        engine = make_engine(speaker=speaker)
        canceller = default_echo_canceller()
        if args.lag or args.true_reaction:
            canceller = RecordingCanceller(canceller)
        if args.backlog_s is not None:  # a loaded machine (or a tracemalloc snapshot) stalls the loop
            driver.BACKLOG_S = args.backlog_s
        if args.rest_after_s is not None:  # every question may find the speaker's stream stopped
            sound_devices.REST_AFTER_S = args.rest_after_s
        devices = DeviceSettings("pulse", "pulse")
        handed_out = HandedOut() if args.true_reaction else None
        speakers = Speakers()
        talk = DeviceConversation(
            engine,
            models,
            ChatModelThinker(StoryModel(), ChatSettings(), work),
            work,
            canceller,
            devices,
            open_output=speakers.opener(
                device_openers(devices)[1] if handed_out is None else handed_out.speaker(devices)
            ),
        )
        over = OverStory(args.after_s)
        paths: dict[str, Path] = {}
        if args.backchannels:
            clips = case_clips("backchannel", "backchannel")
            openers = case_clips("opening_word_cut_in", "cut_in") if args.opening_cut_ins else {}
            manifest |= clips | openers
            paths = {name: Path(entry["path"]) for name, entry in (clips | openers).items()}
            alone |= {
                name: models.transcriber.transcribe(read_wav(path)).text for name, path in paths.items()
            }
            over = OverStory(
                args.after_s,
                tuple(clips),
                args.backchannels_per_reply,
                args.backchannel_every_s,
                tuple(openers),
            )
        script = Script(
            talk,
            Recorder.following(talk.runner),
            args.minutes * 60,
            args.stretch_minutes * 60,
            over,
            dict(os.environ),
            (args.limit_minutes or args.minutes + 10) * 60,
            paths,
        )
        if args.backchannels:
            talk.runner.events.subscribe(script.watch.see)
        if args.television is not None:
            script.television = television(
                folder, args.television, (args.limit_minutes or args.minutes + 10) * 60
            )
        ignored: list[str] = []  # why each input was not taken

        def note_ignored(event: StreamEvent) -> None:
            if event.type == "input.ignored":
                ignored.append(str(getattr(event, "why", "")))

        talk.runner.events.subscribe(note_ignored)

        rss_series: list[list[float]] = []  # [seconds into the soak, MB]
        malloc_series: list[dict[str, float]] = []

        quiet_series: list[list[float]] = []  # the same, taken with nothing in flight: no model buffers
        busy_at = [0.0]

        def on_block() -> None:
            block_s[blocks[0] % BLOCK_TIMES_KEPT] = talk.last_step_s
            blocks[0] += 1
            now = time.monotonic()
            at = now - script.began
            if not rss_series or at - rss_series[-1][0] >= args.rss_every_s:
                rss_series.append([round(at), round(rss_mb())])
                malloc_series.append({"t_s": round(at), **malloc_mb()})
            if talk.runner.state != "listening" or talk.buffer.queued_frames:
                busy_at[0] = now
            elif now - busy_at[0] >= QUIET_BEFORE_SAMPLE_S and (
                not quiet_series or at - quiet_series[-1][0] >= args.rss_every_s
            ):
                quiet_series.append([round(at), round(rss_mb(), 1)])
            script.tick()
            note_heard()
            if script.done:
                talk.stop()

        errors: list[str] = []
        cuts: list[int] = []  # mic clock of each block where speech over a reply paused it

        def note_failure(event: StreamEvent) -> None:
            if isinstance(event, Failure):
                errors.append(event.code)

        talk.runner.events.subscribe(note_failure)
        pause = talk.buffer.pause
        heard_to: dict[int, int | None] = {}  # cut → speaker clock after the last sample counted played

        def noted_pause() -> None:
            cuts.append(talk.clock)
            pause()

        talk.buffer.pause = noted_pause  # type: ignore[method-assign]

        def note_heard() -> None:
            """0.3 s after each pause, where the buffer counts the reply's audio played up to."""
            for cut in cuts[-3:]:
                if cut not in heard_to and talk.clock >= cut + 0.3 * ENGINE_RATE:
                    heard_to[cut] = talk.buffer.clock_of(talk.buffer.audio_played_to)

        block_s = np.zeros(BLOCK_TIMES_KEPT)  # allocated before the start RSS: the soak must not grow itself
        blocks = [0]
        growth = (
            PythonGrowth(__file__, args.trace_from_min * 60, args.trace_every_min * 60)
            if args.trace_every_min
            else None
        )
        native = None
        if args.memray is not None:
            native = NativeWindow(args.memray, args.memray_minutes[0] * 60, args.memray_minutes[1] * 60)
        rss_start = rss_mb()
        began = time.monotonic()
        load_start = os.getloadavg()
        if growth is not None:
            growth.start()
        if native is not None:
            native.start()
        try:
            asyncio.run(talk.run(on_block=on_block))
        finally:
            work.close()
            if script.television_player is not None:
                script.television_player.kill()
            if growth is not None:
                growth.stop()
            if native is not None:
                native.stop()
        result = analyse(script, manifest, alone)
        result.update(
            voice_package=str(Path(voice.__file__).parent),
            wall_s=round(time.monotonic() - began, 1),
            load_average={
                "start": [round(x, 2) for x in load_start],
                "end": [round(x, 2) for x in os.getloadavg()],
            },
            memory=memory_summary(rss_series, malloc_series, args.settle_minutes * 60),
            quiet_rss=quiet_summary(quiet_series, args.settle_minutes * 60),
            rss_mb={
                "start": round(rss_start),
                "end": round(rss_mb()),
                "every": rss_series,
                "quiet": quiet_series,
            },
            malloc_mb=malloc_series,
            python_growth=growth.reports if growth is not None else None,
            errors={code: errors.count(code) for code in sorted(set(errors))},
            block_ms=block_summary(block_s[: min(blocks[0], BLOCK_TIMES_KEPT)] * 1000),
            devices={**talk.device_counters(), "speaker_rests": speakers.rests},
            echo_lag=echo_lag(canceller) if args.lag and isinstance(canceller, RecordingCanceller) else None,
        )
        if args.television is not None:
            on_from = script.television_from
            result["television"] = {
                "under_db": args.television,
                "on_from_s": None if on_from is None else round(on_from / ENGINE_RATE, 1),
                "ignored_as_another_voice": ignored.count("another voice"),
                "ignored_otherwise": len(ignored) - ignored.count("another voice"),
            }
        if args.true_reaction and isinstance(canceller, RecordingCanceller):
            assert handed_out is not None
            cut_ins = [(play.wav, play.clock) for play in script.played if play.interruption]
            rows = true_reactions(cut_ins, canceller, manifest, cuts, handed_out.signal(), heard_to)
            keys = (
                "reaction_ms",
                "detection_ms",
                "queued_ms",
                "reaction_ref_ms",
                "queued_ref_ms",
                "heard_gap_ms",
            )
            result["true_reaction"] = {
                key: spread([row[key] for row in rows if row.get(key) is not None]) for key in keys
            } | {"interruptions": rows}
        return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=60.0, help="how long to soak")
    parser.add_argument(
        "--stretch-minutes", type=float, default=5.0, help="quiet and cut-in stretches alternate"
    )
    parser.add_argument("--after-s", type=float, default=2.5, help="into each story before cutting in")
    parser.add_argument(
        "--backchannels",
        action="store_true",
        help="the second kind of stretch plays backchannels over each story before its cut-in",
    )
    parser.add_argument("--backchannels-per-reply", type=int, default=3, help="backchannels over each story")
    parser.add_argument(
        "--opening-cut-ins",
        action="store_true",
        help="with --backchannels: every other cut-in after them opens with a listener's word and a breath",
    )
    parser.add_argument(
        "--backchannel-every-s", type=float, default=3.5, help="from one backchannel (or cut-in) to the next"
    )
    parser.add_argument(
        "--limit-minutes", type=float, help="stop there, done or not (default: --minutes + 10)"
    )
    parser.add_argument("--rss-every-s", type=float, default=30.0, help="how often RSS is sampled")
    parser.add_argument(
        "--backlog-s",
        type=float,
        help="mic audio the loop may fall behind by before it drops some (the driver's own: 2 s; an echo "
        "canceller given a gap stops the soak)",
    )
    parser.add_argument("--settle-minutes", type=float, default=10.0, help="growth is measured after these")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument(
        "--trace-every-min",
        type=float,
        help="compare tracemalloc snapshots and live objects by type this often (slows the soak down)",
    )
    parser.add_argument("--trace-from-min", type=float, default=5.0, help="when the first snapshot is taken")
    parser.add_argument("--memray", type=Path, help="record allocations with memray into this file")
    parser.add_argument(
        "--memray-minutes",
        type=lambda text: tuple(float(part) for part in text.split(",")),
        default=(5.0, 15.0),
        help="FROM,TO: the window memray records",
    )
    parser.add_argument(
        "--system-malloc",
        action="store_true",
        help="leave glibc malloc as it is (voice.allocator not applied)",
    )
    parser.add_argument("--lag", action="store_true", help="keep the mic and reference to report their lag")
    parser.add_argument(
        "--true-reaction",
        action="store_true",
        help="keep the mic and reference and measure each cut-in's reaction in what the mic captured",
    )
    parser.add_argument(
        "--rest-after-s",
        type=float,
        help=f"the speaker's stream stops after this much idle (voice's own: a few s; the next question "
        f"comes {IDLE_BEFORE_NEXT_S:g} s after a reply, so less makes every question wake it)",
    )
    parser.add_argument(
        "--television",
        type=float,
        metavar="DB",
        help="only the conversation's speaker takes turns, and a television DB under the questions talks on",
    )
    parser.add_argument("--against", type=Path, help="another source tree to soak first, for before/after")
    args = parser.parse_args()

    def measure() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="device-soak-") as folder:
            return run(args, Path(folder))

    print_measured(__file__, args, measure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
