"""Whisper's context: where the assistant's last words help hearing, and where they end turns too soon.

Whisper given the assistant's last sentence as its prompt hears an answer in the question's words
("Pick a card." -> "Hearts."), but it also punctuates differently: given "Sure." it wrote "Sorry." with
a full stop at the comma pause of "Sorry, I meant on Sunday.", and the end-of-turn rule
(voice.engine.utterances.finished) answered into the pause. This measures both sides, on a set of
benchmarks/cases/hearing_sets.py (``tuning`` or ``held_out``) and unfamiliar_speech.py's questions whole and
split by a pause, each said after an assistant reply whose text is its ``context`` (the question it answers,
the line before it, or each of the set's TOPIC_CHANGES).

- ``--candidates`` (tune on ``tuning`` only): every candidate rule (a prompt form, a gate and a scope)
  replayed on the decisions the engine makes: the VAD's pause offers of each eagerness, Smart Turn and
  whisper at each, ``finished``; ``--cache FILE`` keeps the transcripts and judgements for the next run.
- without it: the engine as built (its rule) beside no context, each case through the engine
  (voice.components.make_engine with the reply in its history) in virtual time, its ASR timed.

Per rule (or way) and group: ``wer``, ``changed``, ``into_pause``, ``ended_at_short_pause``,
``extra_decodes``, ``asr_ms``; benchmarks/README.md says what each means and what was chosen.

Usage: python benchmarks/asr_context.py --candidates [--set tuning] [--every N] [--cache FILE]
       python benchmarks/asr_context.py --set held_out [--every N] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cases.hearing_sets import hearing_set
from cases.unfamiliar_speech import corpus
from common.harness import print_json, spread
from common.listening_engine import feed, listening, mic_blocks
from common.word_error import wer_said

from voice.asr.context import asks_the_user, prompt_from, with_ending_of
from voice.asr.guard import guarded
from voice.asr.port import Transcriber, Transcript
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.vad import DEFAULT_BARGE_IN, VoiceActivityDetector, VoiceEnded, VoicePaused
from voice.cancel import CancelToken
from voice.components import make_engine, quiet_vad
from voice.conversation.continuation import Conversation
from voice.conversation.items import UserText
from voice.engine.hold import Eagerness
from voice.engine.utterances import finished
from voice.errors import ModelError
from voice.turn_end.smart_turn import SmartTurn

TAIL_S = 1.2  # silence after a hearing-set utterance: the VAD's long silence ends it
FRAMED_TAIL = round(0.6 * ENGINE_RATE)  # hearing_sets frames a synthesized utterance with this much after it
ABOVE_FLOOR_DB = 15.0  # a real recording's speech stands this far above its quietest frames
INSIDE_S = 0.3  # a request this long before the last word's end went out at a pause inside the utterance
SHORT_PAUSE_S = 0.5  # a request sooner than this after it came at the short pause, not the long silence
FAMILIES = {
    "tuning": ("piper", "en-us", "en-gb", "en-029", "en-gb-x-gbclan"),
    "held_out": ("en-gb-scotland", "en-us-nyc", "en-gb-x-rp", "en-gb-x-gbcwmd"),
}
# What the assistant said last when the user goes on to something else: each set its own sentences.
TOPIC_CHANGES = {
    "tuning": {
        "acknowledgement": "Sure.",
        "statement": "Tomorrow starts dry, then rain moves in from the west.",
        "question": "Would you like to hear the rest of the forecast?",
    },
    "held_out": {
        "acknowledgement": "Okay.",
        "statement": "The museum opens at nine and closes at five on weekdays.",
        "question": "Shall I read you the next chapter?",
    },
}
EAGERNESS = (Eagerness.AUTO, Eagerness.HIGH)
# Words a hint leaves out (faster-whisper's hotwords are a list of words, not a sentence).
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        "a an the of to in on at for with and or but is are was be do does did would should could can will "
        "shall you your i me my we it its this that there what which who how when where whether if",
    )
)


@dataclass(frozen=True)
class Case:
    """One utterance on the mic after the assistant said ``context``; ``speech_end`` is its last word's
    end, ``category`` what it is (answer, command, ..., paused, whole), ``after`` which context."""

    name: str
    category: str
    after: str  # "own" (the question it answers, the line before it) or a TOPIC_CHANGES kind
    text: str
    context: str
    signal: Samples
    speech_end: int


def cases(which: str, every: int) -> list[Case]:
    found: list[Case] = []
    tail = np.zeros(round(TAIL_S * ENGINE_RATE), np.float32)
    changes = TOPIC_CHANGES[which]
    for index, spoken in enumerate(hearing_set(which)):
        if spoken.family != "real" and index % every:
            continue
        category = "real" if spoken.family == "real" else spoken.kind
        signal = np.concatenate([spoken.samples, tail])
        end = last_sound(spoken.samples) if category == "real" else len(spoken.samples) - FRAMED_TAIL
        contexts = {"own": spoken.context} if spoken.context else changes
        for after, context in contexts.items():
            found.append(Case(spoken.name, category, after, spoken.text, context, signal, end))
    said = [s for s in corpus() if s.family in FAMILIES[which]]
    for said_one in said[::every]:
        category = "whole" if said_one.pause_after is None else "paused"
        for after, context in changes.items():
            found.append(
                Case(
                    said_one.name,
                    category,
                    after,
                    said_one.text,
                    context,
                    said_one.signal,
                    said_one.speech_end,
                )
            )
    return found


def last_sound(samples: Samples) -> int:
    """Where the last 10 ms frame ABOVE_FLOOR_DB over the recording's quietest tenth ends."""
    frame = ENGINE_RATE // 100
    frames = len(samples) // frame
    levels = 10 * np.log10(np.square(samples[: frames * frame].reshape(frames, frame)).mean(axis=1) + 1e-12)
    loud = np.flatnonzero(levels > np.percentile(levels, 10) + ABOVE_FLOOR_DB)
    return int(loud[-1] + 1) * frame if len(loud) else len(samples)


def digest(audio: AudioBlock) -> str:
    return hashlib.sha1(np.ascontiguousarray(audio.samples).tobytes()).hexdigest()


class Ears:
    """Whisper behind the guard, as the assistant hears, and Smart Turn, each remembering what it said
    of each audio (and prompt), so every rule is judged on the same decisions; with ``cache``, across
    runs too (a JSON file: the models load only for what it lacks)."""

    def __init__(self, cache: Path | None = None) -> None:
        self._cache = cache
        found = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
        self._heard: dict[str, str | None] = found.get("heard", {})
        self._judged: dict[str, float] = found.get("judged", {})
        self._whisper: Transcriber | None = None
        self._smart_turn: SmartTurn | None = None

    def hear(self, audio: AudioBlock, prompt: str) -> str | None:
        """The transcript with ``prompt`` as context; None when the guard dropped it."""
        key = f"{digest(audio)} {prompt}"
        if key not in self._heard:
            # each prompt's own decode: a rule that ends as the unprompted one does splices the two
            self._whisper = self._whisper or guarded(
                WhisperTranscriber(WhisperSettings(unprompted_ending=False))
            )
            try:
                self._heard[key] = self._whisper.transcribe(audio, context=prompt).text
            except ModelError:
                self._heard[key] = None
        return self._heard[key]

    def judge(self, audio: AudioBlock) -> float:
        key = digest(audio)
        if key not in self._judged:
            self._smart_turn = self._smart_turn or SmartTurn()
            self._judged[key] = self._smart_turn.probability_complete(audio)
        return self._judged[key]

    def save(self) -> None:
        if self._cache is not None:
            self._cache.write_text(json.dumps({"heard": self._heard, "judged": self._judged}))


# -- candidate rules -------------------------------------------------------------------------------


def as_said(sentence: str) -> str:
    return sentence


def bare(sentence: str) -> str:
    """Without the final punctuation: a full stop in the prompt is a full stop whisper may copy."""
    return re.sub(r"[.?!]+$", "", sentence.strip())


def content_words(sentence: str) -> str:
    return " ".join(w for w in re.findall(r"[a-z']+", sentence.lower()) if w not in _FUNCTION_WORDS)


def any_sentence(sentence: str) -> bool:
    return bool(sentence)


@dataclass(frozen=True)
class Rule:
    """What prompt whisper gets for the early (pause) transcript and for the final one."""

    name: str
    form: Callable[[str], str]
    gate: Callable[[str], bool]
    at_pause: bool  # the early transcript, whose punctuation ends turns, has the prompt too
    second_decode: bool  # kept as the final, an early transcript without the prompt is decoded again
    plain_ending: bool = False  # prompted words, ending as the decode without a prompt ends

    def prompt(self, heard: str, early: bool) -> str:
        sentence = prompt_from(heard)
        if not self.gate(sentence) or (early and not self.at_pause):
            return ""
        return self.form(sentence)

    def hear(self, ears: Ears, audio: AudioBlock, prompt: str) -> str | None:
        text = ears.hear(audio, prompt)
        if not (self.plain_ending and prompt) or text is None:
            return text
        plain = ears.hear(audio, "")
        return text if plain is None else with_ending_of(text, plain)


def candidates() -> list[Rule]:
    rules = [Rule("none", as_said, lambda s: False, False, False)]
    for form in (as_said, bare, content_words):
        for gate in (any_sentence, asks_the_user):
            for scope, at_pause, again in (
                ("everywhere", True, False),
                ("final, decoded again", False, True),
                ("final only", False, False),
            ):
                rules.append(
                    Rule(f"{form.__name__} / {gate.__name__} / {scope}", form, gate, at_pause, again)
                )
            name = f"{form.__name__} / {gate.__name__} / everywhere, plain ending"
            rules.append(Rule(name, form, gate, True, False, plain_ending=True))
    return rules


@dataclass(frozen=True)
class Offers:
    """The VAD's pause offers (voiced end, the utterance so far) and its end, as the engine gets them."""

    pauses: list[tuple[int, AudioBlock]]
    ended: VoiceEnded | None


def offers(signal: Samples, eagerness: Eagerness) -> Offers:
    vad = VoiceActivityDetector(quiet_vad(eagerness), DEFAULT_BARGE_IN)
    pauses: list[tuple[int, AudioBlock]] = []
    for block in mic_blocks(signal):
        for event in vad.process(block, False):
            if isinstance(event, VoicePaused):
                pauses.append((event.sample, event.utterance))
            elif isinstance(event, VoiceEnded):
                return Offers(pauses, event)
    return Offers(pauses, None)


@dataclass(frozen=True)
class Outcome:
    text: str | None  # the transcript the request carries (None: dropped, or nothing sent)
    into_pause: bool  # a request went out at a pause inside the utterance
    at_short_pause: bool  # the turn ended at the pause after the last word
    extra_decodes: int  # decodes beyond one per pause offer (or end) the engine asks for


def replay(case: Case, found: Offers, rule: Rule, ears: Ears) -> Outcome:
    """What the engine decides with ``rule``, pause by pause (a pause taken for the end inside the
    utterance is noted and the utterance goes on, as after the user goes on within the hold)."""
    early, final = rule.prompt(case.context, True), rule.prompt(case.context, False)
    twice = int(rule.plain_ending and bool(early))  # each decode with a prompt is decoded plain too
    inside = case.speech_end - round(INSIDE_S * ENGINE_RATE)
    into_pause, at_short_pause, kept, extra = False, False, None, 0
    for sample, audio in found.pauses:
        text = rule.hear(ears, audio, early)
        extra += twice
        done = text is not None and finished(ears.judge(audio), text)
        if sample < inside:
            into_pause = into_pause or done
            continue
        kept, at_short_pause = (sample, audio, text), done
        if done:
            break
    ended = found.ended
    if kept is not None and (at_short_pause or (ended is not None and kept[0] == ended.sample)):
        # ended at the offer, or the offer was the whole utterance: its transcript is kept
        if rule.second_decode and early != final:
            return Outcome(ears.hear(kept[1], final), into_pause, at_short_pause, extra + 1)
        return Outcome(kept[2], into_pause, at_short_pause, extra)
    if ended is None:
        return Outcome(None, into_pause, False, extra)
    return Outcome(rule.hear(ears, ended.utterance, final), into_pause, False, extra + twice)


# -- figures ---------------------------------------------------------------------------------------


def mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 3) if values else None


def groups(said: list[Case]) -> dict[str, list[int]]:
    """Case indices by category, and those after each kind of topic change."""
    found: dict[str, list[int]] = {}
    for i, case in enumerate(said):
        found.setdefault(case.category, []).append(i)
        if case.after != "own":
            found.setdefault(f"topic change: {case.after}", []).append(i)
    return dict(sorted(found.items()))


def figures(said: list[Case], outcomes: dict[str, list[Outcome]], baseline: list[Outcome]) -> dict[str, Any]:
    """Word error by group and the turn-end counts of one rule (``outcomes`` per eagerness)."""
    auto = outcomes["auto"]
    return {
        "wer": {
            group: mean([wer_said(said[i].text, auto[i].text or "") for i in members if said[i].text])
            for group, members in groups(said).items()
        },
        "changed": sum(auto[i].text != baseline[i].text for i in range(len(said))),
        "into_pause": {
            label: {
                group: sum(runs[i].into_pause for i in members) for group, members in groups(said).items()
            }
            for label, runs in outcomes.items()
        },
        "ended_at_short_pause": {
            label: {
                group: sum(runs[i].at_short_pause for i in members) for group, members in groups(said).items()
            }
            for label, runs in outcomes.items()
        },
        "extra_decodes": sum(o.extra_decodes for o in auto),
    }


def measure_candidates(which: str, every: int, cache: Path | None) -> dict[str, Any]:
    said = cases(which, every)
    ears = Ears(cache)
    rules = candidates()
    outcomes: dict[str, dict[str, list[Outcome]]] = {rule.name: {} for rule in rules}
    for eagerness in EAGERNESS:
        for index, case in enumerate(said):
            print(f"{eagerness.value} {index + 1}/{len(said)} {case.name}", file=sys.stderr, flush=True)
            found = offers(case.signal, eagerness)
            for rule in rules:
                outcomes[rule.name].setdefault(eagerness.value, []).append(replay(case, found, rule, ears))
    ears.save()
    baseline = outcomes["none"]["auto"]
    return {
        "set": which,
        "cases": {group: len(members) for group, members in groups(said).items()},
        "rules": {name: figures(said, runs, baseline) for name, runs in outcomes.items()},
    }


# -- through the engine ----------------------------------------------------------------------------


class Timed:
    """The transcriber, timing each call the engine gave context (``keep``: False drops the context)."""

    def __init__(self, inner: Transcriber, keep: bool) -> None:
        self._inner = inner
        self._keep = keep
        self.ms: list[float] = []

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        started = time.perf_counter()
        try:
            return self._inner.transcribe(
                audio,
                word_timings=word_timings,
                over_reply=over_reply,
                cancel=cancel,
                context=context if self._keep else "",
            )
        finally:
            if context:
                self.ms.append((time.perf_counter() - started) * 1000)


class Judge:
    def __init__(self, ears: Ears) -> None:
        self._ears = ears

    def probability_complete(self, audio: AudioBlock) -> float:
        return self._ears.judge(audio)


def engine_run(case: Case, eagerness: Eagerness, transcriber: Transcriber, judge: Judge) -> Outcome:
    """``case`` said to an engine whose last reply was ``case.context``, in virtual time."""
    conversation = Conversation()
    conversation.submit("Hello.")
    conversation.add_text(case.context)
    conversation.complete()
    runner, requests = listening(make_engine(conversation, eagerness), transcriber, judge)
    sent: list[int] = []
    for block in mic_blocks(case.signal):
        feed(runner, block)
        sent += [block.end] * (len(requests.sent) - len(sent))
    if not requests.sent:
        return Outcome(None, False, False, 0)
    last = requests.sent[-1].items[-1]
    text = last.text if isinstance(last, UserText) else None
    inside = case.speech_end - round(INSIDE_S * ENGINE_RATE)
    # the last request (the whole utterance's) went out before the VAD's long silence could end it
    short = inside <= sent[-1] < case.speech_end + round(SHORT_PAUSE_S * ENGINE_RATE)
    return Outcome(text, sent[0] < inside, short, 0)


def median_and_p95(values: list[float]) -> dict[str, float | None]:
    found = spread(values)
    return {"median": found.get("p50"), "p95": found.get("p95")}


def measure_engine(which: str, every: int) -> dict[str, Any]:
    said = cases(which, every)
    ears = Ears()
    whisper = guarded(WhisperTranscriber())
    ways = {"no context": Timed(whisper, keep=False), "context": Timed(whisper, keep=True)}
    outcomes: dict[str, dict[str, list[Outcome]]] = {way: {} for way in ways}
    for eagerness in EAGERNESS:
        for index, case in enumerate(said):
            print(f"{eagerness.value} {index + 1}/{len(said)} {case.name}", file=sys.stderr, flush=True)
            for way, transcriber in ways.items():
                run = engine_run(case, eagerness, transcriber, Judge(ears))
                outcomes[way].setdefault(eagerness.value, []).append(run)
    baseline = outcomes["no context"]["auto"]
    return {
        "set": which,
        "cases": {group: len(members) for group, members in groups(said).items()},
        "ways": {way: figures(said, runs, baseline) for way, runs in outcomes.items()},
        "asr_ms": {way: median_and_p95(timed.ms) for way, timed in ways.items()},
        "load_average": round(os.getloadavg()[0], 2),
        "changed": [
            {"case": case.name, "after": case.context, "without": baseline[i].text, "with": with_.text}
            for i, (case, with_) in enumerate(zip(said, outcomes["context"]["auto"], strict=True))
            if with_.text != baseline[i].text
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="tuning", choices=tuple(FAMILIES))
    parser.add_argument("--every", type=int, default=1, help="of the synthesized voices, every Nth utterance")
    parser.add_argument("--candidates", action="store_true", help="replay every candidate rule")
    parser.add_argument("--cache", type=Path, help="with --candidates: transcripts kept across runs")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    if args.candidates:
        found = measure_candidates(args.set, args.every, args.cache)
    else:
        found = measure_engine(args.set, args.every)
    print_json(found, args.out)


if __name__ == "__main__":
    main()
