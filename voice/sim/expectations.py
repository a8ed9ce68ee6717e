"""A scenario's ``expect`` list (docs/architecture.md §4): what must hold after a run, checked against
its report, session log and events.

Pure: parsing takes the list as JSON and raises ``ValueError``/``TypeError`` with one line; checking
takes the run's records and returns one ``Outcome`` per expectation, its line saying what differed.
Replies and requests are counted as the report's ``turns`` are (the N-th LLM request), user cues as
the scenario's ``user`` list is (``cue`` in the report's ``user_audio``/``user_text``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from voice.engine.transcripts import edit_distance

# the VAD's onset is the start of its first voiced 20 ms frame: when a cue opens on voice, that can be up to
# a frame (and the stream's rounding of its time) before the cue's first sample
ONSET_SLACK_S = 0.05

CARRIES = ("interrupted", "merged", "tool_result", "not_run")
NOT_RUN = "Not run"  # the opening of a failed result for a call that never started (§1 rule 3)

# (the text, the criterion) -> (met, why): an LLM asked whether the text meets the criterion
Judge = Callable[[str, str], tuple[bool, str]]


@dataclass(frozen=True)
class Expectation:
    """One entry of ``expect``: its ``kind`` (the key naming it), the number it is about, its options."""

    kind: str
    about: Any
    options: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # the entry as written, for the line a result prints

    @property
    def label(self) -> str:
        return self.source or f"{self.kind} {self.about}"


@dataclass(frozen=True)
class Outcome:
    """An expectation's result: passed, failed or skipped (a judge nobody named), and one line why."""

    expectation: Expectation
    status: str  # "pass", "fail" or "skip"
    line: str

    @property
    def failed(self) -> bool:
        return self.status == "fail"


@dataclass(frozen=True)
class RunRecords:
    """What one run wrote: report.json, the session log's records and the client events, as JSON."""

    report: dict[str, Any]
    session: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


# -- parsing ------------------------------------------------------------------------------------------

# kind -> (what it is about: "reply", "cue", "flag" or "name"; the options it may carry)
_KINDS: dict[str, tuple[str, frozenset[str]]] = {
    "completed": ("reply", frozenset()),
    "cut": ("reply", frozenset({"by", "within_ms"})),
    "heard_prefix": ("reply", frozenset({"within_words"})),
    "request": ("reply", frozenset({"carries", "output", "contains"})),
    "no_request_after_stop": ("flag", frozenset()),
    "backchannel": ("reply", frozenset({"text"})),
    "voice_to_voice": ("reply", frozenset({"under_ms"})),
    "reply_text": ("reply", frozenset({"contains", "matches", "judge", "heard"})),
    "tool_called": ("name", frozenset({"arguments", "reply"})),
}


def parse_expectations(data: Any) -> tuple[Expectation, ...]:
    """The scenario's ``expect`` list; a bad entry raises one line naming it."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise TypeError('expect must be a list of expectations, e.g. [{"completed": 1}]')
    return tuple(_expectation(index, entry) for index, entry in enumerate(data, start=1))


def _expectation(index: int, entry: Any) -> Expectation:
    where = f"expect entry {index}"
    if not isinstance(entry, dict):
        raise TypeError(f'{where} must be an object such as {{"completed": 1}}')
    kinds = [key for key in entry if key in _KINDS]
    if len(kinds) != 1:
        known = ", ".join(_KINDS)
        raise ValueError(f"{where} must name exactly one kind of expectation (one of {known})")
    kind = kinds[0]
    about_kind, allowed = _KINDS[kind]
    options = {key: value for key, value in entry.items() if key != kind}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"{where} ({kind}): unknown key {unknown[0]!r}; it takes {_listed(allowed)}")
    about = entry[kind]
    if about_kind == "reply":
        _positive(about, f"{where} ({kind})", "a reply number counting from 1")
    elif about_kind == "flag" and about is not True:
        raise ValueError(f"{where} ({kind}) must be true")
    elif about_kind == "name" and (not isinstance(about, str) or not about):
        raise ValueError(f"{where} ({kind}) must be a tool's name")
    _check_options(f"{where} ({kind})", kind, options)
    source = json.dumps(entry, ensure_ascii=False)
    return Expectation(kind, about, options, source)


def _check_options(where: str, kind: str, options: dict[str, Any]) -> None:
    for key in ("by", "reply"):
        if key in options:
            _positive(options[key], where, f"{key} must be a number counting from 1")
    for key in ("within_ms", "under_ms", "within_words"):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            raise ValueError(f"{where}: {key} must be a number not below 0")
    if kind == "voice_to_voice" and "under_ms" not in options:
        raise ValueError(f"{where}: needs under_ms")
    if kind == "request" and options.get("carries") not in CARRIES:
        raise ValueError(f"{where}: carries must be one of {', '.join(CARRIES)}")
    if kind == "reply_text":
        given = [key for key in ("contains", "matches", "judge") if key in options]
        if len(given) != 1:
            raise ValueError(f"{where}: needs one of contains, matches or judge")
        if not isinstance(options[given[0]], str) or not options[given[0]]:
            raise ValueError(f"{where}: {given[0]} must be a non-empty string")
        if "matches" in options:
            try:
                re.compile(options["matches"])
            except re.error as exc:
                raise ValueError(f"{where}: matches is not a regular expression: {exc}") from None
    for key in ("contains", "output", "text"):
        if key in options and not isinstance(options[key], str):
            raise ValueError(f"{where}: {key} must be a string")
    if "arguments" in options and not isinstance(options["arguments"], dict):
        raise ValueError(f"{where}: arguments must be an object")


def _positive(value: Any, where: str, wanted: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {wanted}, got {value!r}")


def _listed(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys)) or "no other key"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


# -- checking -----------------------------------------------------------------------------------------


def check_expectations(
    expectations: Sequence[Expectation], records: RunRecords, judge: Judge | None = None
) -> list[Outcome]:
    """One outcome per expectation, in order; ``judge`` answers ``judge`` entries (else they are skipped)."""
    run = _RunView(records)
    outcomes = []
    for expectation in expectations:
        check = _CHECKS[expectation.kind]
        status, line = check(run, expectation, judge)
        outcomes.append(Outcome(expectation, status, line))
    return outcomes


def words(text: str) -> list[str]:
    """Text as the words a listener compares: lower case, punctuation dropped."""
    return re.findall(r"[a-z0-9']+", text.lower())


class _RunView:
    """The records, read the ways the checks need them."""

    def __init__(self, records: RunRecords) -> None:
        self.report = records.report
        self.turns: list[dict[str, Any]] = list(records.report.get("turns", []))
        self.speech: list[dict[str, Any]] = list(records.report.get("user_speech", []))
        self.cues = {
            int(cue["cue"]): cue for key in ("user_audio", "user_text") for cue in records.report.get(key, [])
        }
        self.calls = _tool_calls(records.session)
        self.voice_to_voice = {
            int(event["turn"]): float(event["metrics"]["voice_to_voice_ms"])
            for event in records.events
            if event.get("type") == "response.done"
            and isinstance(event.get("metrics"), dict)
            and "voice_to_voice_ms" in event["metrics"]
        }

    def turn(self, number: int) -> dict[str, Any] | None:
        return self.turns[number - 1] if 0 < number <= len(self.turns) else None

    def missing(self, number: int) -> tuple[str, str]:
        return "fail", f"reply {number}: there were only {len(self.turns)} requests"

    def onset(self, cue: dict[str, Any], stopped: float) -> float | None:
        """Where the pipeline heard the cutting speech begin: the last utterance starting between the
        cue's start and the reply's audio stop; None if it heard none."""
        at = cue.get("at_s")
        if at is None:
            return None
        starts = [s["start_s"] for s in self.speech if at - ONSET_SLACK_S <= s["start_s"] <= stopped]
        return max(starts, default=None)

    def cutting_cue(self, turn: dict[str, Any]) -> int | None:
        """The user cue that cut a reply: the last one placed before its audio stopped (or its barge-in)."""
        when = turn.get("barge_in_s") or turn.get("audio_end_s")
        if when is None:
            return None
        placed = [
            n for n, c in self.cues.items() if c.get("at_s") is not None and c["at_s"] <= when + ONSET_SLACK_S
        ]
        return max(placed, default=None)


def _tool_calls(session: list[dict[str, Any]]) -> list[tuple[int | None, dict[str, Any]]]:
    """Every tool call the log committed, with the turn it was proposed in."""
    calls: list[tuple[int | None, dict[str, Any]]] = []
    turn: int | None = None
    for record in session:
        if record.get("type") == "turn_start":
            turn = int(record["turn"])
        item = record.get("item")
        if record.get("type") == "item" and isinstance(item, dict) and item.get("role") == "tool_call":
            calls.append((turn, item))
    return calls


Checked = tuple[str, str]


def _completed(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    if turn.get("error"):
        return "fail", f"reply {e.about} failed ({turn['error']}), it did not complete"
    if turn.get("interrupted"):
        return (
            "fail",
            f"reply {e.about} was cut at {turn.get('audio_end_s')} s after {_tail(turn['spoken'])}",
        )
    if turn.get("audio_start_s") is None:
        return "fail", f"reply {e.about} never played"
    return "pass", f"reply {e.about} played to its end ({turn['audio_start_s']}-{turn['audio_end_s']} s)"


def _cut(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    if not turn.get("interrupted"):
        return "fail", f"reply {e.about} was not cut: it played to its end"
    cue_number = run.cutting_cue(turn)
    wanted = e.options.get("by")
    if wanted is not None and cue_number != wanted:
        return "fail", f"reply {e.about} was cut by user cue {cue_number}, not {wanted}"
    line = f"reply {e.about} was cut by user cue {cue_number}"
    within = e.options.get("within_ms")
    if within is None:
        return "pass", line
    cue = run.cues.get(cue_number) if cue_number is not None else None
    stopped = turn.get("audio_end_s")
    onset = None if cue is None or stopped is None else run.onset(cue, stopped)
    if onset is None or stopped is None:
        return "fail", f"{line}, but no speech onset or audio stop was recorded to time it"
    took = round((stopped - onset) * 1000)
    verdict = "pass" if took <= within else "fail"
    return verdict, f"{line}: audio stopped {took} ms after the speech began (bound {_ms(within)})"


def _heard_prefix(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    heard, reply = words(turn.get("spoken", "")), words(turn.get("reply", ""))
    allowed = int(e.options.get("within_words", 0))
    differing = edit_distance(heard, reply[: len(heard)]) + max(0, len(heard) - len(reply))
    summary = f"heard {len(heard)} of {len(reply)} words: {_tail(turn.get('spoken', ''))}"
    if differing > allowed:
        return (
            "fail",
            f"reply {e.about}: heard text differs from the reply's start by {differing} words ({summary})",
        )
    return "pass", f"reply {e.about}: {summary}"


def _request(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    items: list[dict[str, Any]] = turn["request"]
    carries = e.options["carries"]
    where = f"request {e.about}"
    if carries == "interrupted":
        before = run.turn(e.about - 1)
        cut = [item for item in items if item.get("role") == "assistant" and item.get("interrupted")]
        if not cut:
            return "fail", f"{where} carries no interrupted assistant item"
        text = cut[-1]["text"]
        if before is not None and words(text) != words(before.get("spoken", "")):
            return "fail", f"{where} carries {_tail(text)}, not the heard {_tail(before.get('spoken', ''))}"
        return _contains(where, text, e) or ("pass", f"{where} carries the interrupted item {_tail(text)}")
    if carries == "merged":
        before = run.turn(e.about - 1)
        if before is None:
            return "fail", f"{where} has no request before it to merge with"
        users_before = [i for i in before["request"] if i.get("role") == "user"]
        users = [i for i in items if i.get("role") == "user"]
        if len(users) != len(users_before) or not users:
            return (
                "fail",
                f"{where} holds {len(users)} user items, the one before {len(users_before)}: not merged",
            )
        merged, first = users[-1]["text"], users_before[-1]["text"]
        if len(words(merged)) <= len(words(first)) or words(merged)[: len(words(first))] != words(first):
            return "fail", f"{where}'s last user item {_quote(merged)} does not continue {_quote(first)}"
        return _contains(where, merged, e) or ("pass", f"{where} carries the merged input {_quote(merged)}")
    results = [item for item in items if item.get("role") == "tool_result"]
    if not results:
        return "fail", f"{where} carries no tool result"
    last = results[-1]
    output = str(last.get("output", ""))
    not_run = bool(last.get("failed")) and output.startswith(NOT_RUN)
    if carries == "not_run" and not not_run:
        return "fail", f'{where}\'s tool result is {_quote(output)}, not a "Not run" one'
    if carries == "tool_result" and (last.get("failed") or not_run):
        return "fail", f"{where}'s tool result failed: {_quote(output)}"
    wanted = e.options.get("output")
    if wanted is not None and wanted.lower() not in output.lower():
        return "fail", f"{where}'s tool result is {_quote(output)}, without {_quote(wanted)}"
    return "pass", f"{where} carries the tool result {_quote(output)}"


def _contains(where: str, text: str, e: Expectation) -> Checked | None:
    wanted = e.options.get("contains")
    if wanted is not None and wanted.lower() not in text.lower():
        return "fail", f"{where}: {_quote(text)} does not contain {_quote(wanted)}"
    return None


def _no_request_after_stop(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    stops = run.report.get("stops", [])
    if not stops:
        return "fail", "no stop phrase was heard"
    for stop in stops:
        later_input = [s for s in run.speech if s["start_s"] > stop["t"] and s.get("transcript")]
        later_input += [c for c in run.report.get("user_text", []) if (c.get("at_s") or 0) > stop["t"]]
        stopped = stop.get("turn") or 0
        after = [n for n in range(stopped + 1, len(run.turns) + 1)]
        if after and not later_input:
            return "fail", f"request {after[0]} followed the stop {_quote(stop['text'])} with no new input"
    texts = ", ".join(_quote(stop["text"]) for stop in stops)
    return "pass", f"no request followed the stop phrase ({texts})"


def _backchannel(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    heard = [b for b in run.report.get("backchannels", []) if b.get("turn") == e.about]
    wanted = e.options.get("text")
    if wanted is not None:
        heard = [b for b in heard if words(wanted) == words(b["text"])]
    if not heard:
        said = [s.get("transcript") for s in run.speech if s.get("transcript")]
        return (
            "fail",
            f"no backchannel{' ' + _quote(wanted) if wanted else ''} over reply {e.about} (user said {said})",
        )
    stopped = turn.get("audio_end_s")
    nod = heard[0]
    if stopped is not None and stopped <= nod["t"]:
        return (
            "fail",
            f"backchannel {_quote(nod['text'])} at {nod['t']} s, but reply {e.about} stopped at {stopped} s",
        )
    return (
        "pass",
        f"backchannel {_quote(nod['text'])} at {nod['t']} s; reply {e.about} went on to {stopped} s",
    )


def _voice_to_voice(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    measured = run.voice_to_voice.get(e.about)
    if measured is None:
        start = turn.get("audio_start_s")
        ends = [
            s["end_s"]
            for s in run.speech
            if s.get("end_s") is not None and start is not None and s["end_s"] <= start
        ]
        if start is None or not ends:
            return (
                "fail",
                f"reply {e.about} has no voice-to-voice time (no audio, or no user speech before it)",
            )
        measured = round((start - max(ends)) * 1000.0, 1)
    bound = e.options["under_ms"]
    verdict = "pass" if measured < bound else "fail"
    return verdict, f"reply {e.about}: voice-to-voice {_ms(measured)} (bound {_ms(bound)})"


def _reply_text(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    turn = run.turn(e.about)
    if turn is None:
        return run.missing(e.about)
    which = "heard text" if e.options.get("heard") else "text"
    text = str(turn.get("spoken" if e.options.get("heard") else "reply", ""))
    where = f"reply {e.about}'s {which}"
    if "contains" in e.options:
        wanted = e.options["contains"]
        found = wanted.lower() in text.lower()
        return (
            "pass" if found else "fail"
        ), f"{where} {_quote(text)} {'contains' if found else 'lacks'} {_quote(wanted)}"
    if "matches" in e.options:
        found = re.search(e.options["matches"], text) is not None
        return (
            "pass" if found else "fail"
        ), f"{where} {_quote(text)} {'matches' if found else 'does not match'} /{e.options['matches']}/"
    criterion = e.options["judge"]
    if judge is None:
        return "skip", f"{where}: judge {_quote(criterion)} not asked (no judge LLM named; see --judge-llm)"
    met, why = judge(text, criterion)
    return (
        "pass" if met else "fail"
    ), f"{where} {_quote(text)}: judge says {'yes' if met else 'no'} to {_quote(criterion)} ({why})"


def _tool_called(run: _RunView, e: Expectation, judge: Judge | None) -> Checked:
    reply = e.options.get("reply")
    calls = [item for turn, item in run.calls if item.get("name") == e.about and reply in (None, turn)]
    where = f"tool {e.about}" + (f" in reply {reply}" if reply else "")
    if not calls:
        named = sorted({str(item.get("name")) for _, item in run.calls})
        return "fail", f"{where} was not called (calls: {', '.join(named) or 'none'})"
    wanted = e.options.get("arguments")
    if wanted is None:
        return "pass", f"{where} was called with {_short(calls[0].get('arguments', {}))}"
    for call in calls:
        given = call.get("arguments") or {}
        if all(given.get(key) == value for key, value in wanted.items()):
            return "pass", f"{where} was called with {_short(given)}"
    return "fail", f"{where} was called with {_short(calls[0].get('arguments', {}))}, not {_short(wanted)}"


_CHECKS: dict[str, Callable[[_RunView, Expectation, Judge | None], Checked]] = {
    "completed": _completed,
    "cut": _cut,
    "heard_prefix": _heard_prefix,
    "request": _request,
    "no_request_after_stop": _no_request_after_stop,
    "backchannel": _backchannel,
    "voice_to_voice": _voice_to_voice,
    "reply_text": _reply_text,
    "tool_called": _tool_called,
}


def _quote(text: str) -> str:
    text = " ".join(str(text).split())
    return '"' + (text if len(text) <= 70 else text[:67] + "...") + '"'


def _tail(text: str) -> str:
    """Heard text by its end, where it was cut."""
    text = " ".join(str(text).split())
    return '"' + (text if len(text) <= 70 else "..." + text[-67:]) + '"'


def _ms(value: float) -> str:
    return f"{value:g} ms"
