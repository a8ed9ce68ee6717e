"""What happened in a session, as reports and benchmarks need it, from the client stream and the log alone.

The recorder is a reader like any client: it takes the events a websocket client receives (as JSON,
so a recorded events.jsonl replays exactly) and the records the session log stores, and keeps, per
LLM request, what was sent, generated and heard and when its audio played, and per utterance, when
the user spoke and the words taken as their input. It never looks inside the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.client_events import SPOKEN_INPUT, StreamEvent, event_json
from voice.conversation.continuation import Conversation
from voice.conversation.items import Item, ToolCall
from voice.conversation.log_records import (
    HistoryTrimmed,
    InputWithdrawn,
    ItemCommitted,
    LogRecord,
    TurnEnded,
    TurnFailed,
    TurnLost,
    TurnStarted,
)
from voice.conversation.session_log import load_session
from voice.errors import SessionLogError
from voice.runtime import ActionRunner


@dataclass
class RecordedTurn:
    """One LLM request and what became of it; times are seconds on the session's sample clock."""

    turn: int
    request: tuple[Item, ...]  # the last request sent for it (a retry after trimming sends a shorter one)
    reply: str = ""
    interrupted: bool = False
    done: bool = False  # played in full
    ended: bool = False  # the log closed it (completed, cut or failed)
    logged_heard: str = ""  # what the log says was heard when it ended
    told_heard: str = ""  # the latest the stream said was heard (response.heard, interrupted, done)
    audio_start_s: float | None = None
    audio_end_s: float | None = None
    barge_in_s: float | None = None
    tool_calls: list[str] = field(default_factory=list)
    false_barge_ins: int = 0
    error: str | None = None
    discarded: bool = False  # a request sent at a pause the user went on from, unheard
    metrics: dict[str, float] = field(default_factory=dict)  # response.done's: voice_to_voice_ms, ...

    @property
    def spoken(self) -> str:
        """The text heard: all of it for a reply played in full, else what the user heard of it."""
        return self.told_heard if self.done or self.interrupted or not self.ended else self.logged_heard


@dataclass
class RecordedSpeech:
    """One user utterance as the stream told it: when it began and ended, and the words taken from it.

    ``transcript`` is the text the utterance gave as input; empty when it gave none (noise, the
    assistant's own echo, a failed transcription), None while its transcript may still come.
    """

    start_s: float
    end_s: float | None = None
    transcript: str | None = None


@dataclass(frozen=True)
class RecordedOverlap:
    """Words said over a reply that took no turn: a backchannel (the reply went on) or a stop (it was cut
    and nothing asked); ``turn`` the reply's, if one was in flight."""

    t: float
    text: str
    turn: int | None = None


class Recorder:
    """Turns, utterances, duplicates and notices, from ``see`` (client events) and ``note`` (log records)."""

    def __init__(self) -> None:
        self.turns: dict[int, RecordedTurn] = {}
        self.speech: list[RecordedSpeech] = []
        self.duplicates: list[str] = []
        self.notices: list[str] = []
        self.backchannels: list[RecordedOverlap] = []
        self.stops: list[RecordedOverlap] = []
        self._conversation = Conversation()  # the log replayed: what each request carried
        self._open_turn: int | None = None  # the turn the log has in flight
        self._ended_last: int | None = None  # the turn the log's last record ended, if any
        self._state = "listening"
        self._created: int | None = None  # the latest turn the stream heard of
        self._candidate: int | None = None  # a turn paused by speech over its audio, not yet judged

    @classmethod
    def from_files(cls, events: Path, session_log: Path) -> Recorder:
        """A recorder fed from a recorded events.jsonl and session log (what `voice simulate` writes)."""
        recorder = cls()
        for logged in load_session(session_log).events:
            recorder.note(logged.event)
        try:
            lines = events.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SessionLogError(f"cannot read events {events}: {exc.strerror}") from exc
        for number, line in enumerate(lines, start=1):
            try:
                recorder.see(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise SessionLogError(f"{events}:{number}: not a client event: {exc}") from exc
        return recorder

    @classmethod
    def following(cls, runner: ActionRunner) -> Recorder:
        """A recorder fed live: ``runner``'s stream, and the records its session log is given."""
        recorder = cls()
        runner.events.subscribe(recorder.see_event)
        runner.on_log_record(recorder.note)
        return recorder

    def see_event(self, event: StreamEvent) -> None:
        """An event as published (a live subscriber): recorded as a client receives it."""
        self.see(event_json(event))

    # -- the session log: requests, replies, heard text, how each turn ended ----------------------

    def note(self, record: LogRecord) -> None:
        """One record the session log stores, in order."""
        self._conversation.replay(record)
        ended_last, self._ended_last = self._ended_last, None
        match record:
            case TurnStarted(turn=turn):
                self._open_turn = turn
                self._turn(turn).request = self._conversation.next_items
            case HistoryTrimmed() if self._open_turn is not None:
                self._turn(self._open_turn).request = self._conversation.next_items
            case ItemCommitted(item=ToolCall(name=name)) if self._open_turn is not None:
                self._turn(self._open_turn).tool_calls.append(name)
            case TurnEnded(turn=turn, cancelled=cancelled, generated=generated, heard=heard):
                recorded = self._turn(turn)
                recorded.reply, recorded.ended = generated, True
                recorded.logged_heard = heard if cancelled else generated
                self._open_turn, self._ended_last = None, turn
            case TurnFailed(turn=turn, reason=reason, generated=generated, heard=heard):
                recorded = self._turn(turn)
                recorded.reply, recorded.logged_heard, recorded.error = generated, heard, reason
                recorded.ended = True
                self._open_turn = None
            case TurnLost(turn=turn, heard=heard):
                recorded = self._turn(turn)
                recorded.logged_heard, recorded.told_heard = heard, heard
                recorded.interrupted = recorded.ended = True
                self._open_turn = None
            case InputWithdrawn() if ended_last is not None:
                # the input the turn just cut answered was only the start of what the user said
                discarded = self._turn(ended_last)
                discarded.discarded, discarded.interrupted = True, True

    def _turn(self, turn: int) -> RecordedTurn:
        recorded = self.turns.get(turn)
        if recorded is None:
            recorded = self.turns[turn] = RecordedTurn(turn, ())
        return recorded

    # -- the client stream: playback, barge-ins, utterances ----------------------------------------

    def see(self, event: dict[str, Any]) -> None:
        """One client event as JSON (``type`` and its fields), in the order the stream sent them."""
        kind = event["type"]
        if kind == "state":
            self._state_changed(str(event["state"]))
        elif kind == "input.speech_started":
            self._speech_started(float(event["t"]))
        elif kind == "input.speech_stopped":
            open_speech = self._open_speech()
            if open_speech is not None:
                open_speech.end_s = float(event["t"])
        elif kind == "input.transcript" and str(event["id"]).startswith(SPOKEN_INPUT):
            self._transcribed(str(event["text"]))
        elif kind == "input.backchannel":
            self._backchannel(event)
        elif kind == "input.stop":
            self.stops.append(RecordedOverlap(float(event["t"]), str(event["text"]), self._created))
        elif kind == "input.duplicate":
            self.duplicates.append(str(event["id"]))
        elif kind == "response.created":
            self._created, self._candidate = int(event["turn"]), None
        elif kind == "output_audio.started":
            self._turn(int(event["turn"])).audio_start_s = float(event["t"])
        elif kind == "output_audio.stopped":
            turn = int(event["turn"])
            self._turn(turn).audio_end_s = float(event["t"])
            if self._candidate == turn:  # it ended paused (it failed): the pause stays a barge-in
                self._candidate = None
        elif kind == "response.heard":
            self._turn(int(event["turn"])).told_heard = str(event["text"])
        elif kind == "response.interrupted":
            recorded = self._turn(int(event["turn"]))
            recorded.interrupted, recorded.told_heard = True, str(event["heard"])
            self._candidate = None
        elif kind == "response.done":
            self._done(int(event["turn"]), str(event["text"]), event.get("metrics") or {})
        elif kind == "notice":
            self.notices.append(str(event["text"]))

    def _state_changed(self, state: str) -> None:
        """Listening again means no transcript is due; the reply audible again after speech paused it
        means that speech was not the user cutting in."""
        if state == "listening":
            self._no_words_before(len(self.speech))
        if state == "speaking" and self._candidate is not None:
            recorded = self._turn(self._candidate)
            recorded.false_barge_ins += 1
            recorded.barge_in_s = None
            self._candidate = None
        self._state = state

    def _speech_started(self, t: float) -> None:
        """Speech that begins while the reply is audible pauses it: a barge-in, until judged otherwise."""
        self.speech.append(RecordedSpeech(t))
        turn = self._created
        if self._state == "speaking" and turn is not None:
            recorded = self._turn(turn)
            if recorded.barge_in_s is None:
                recorded.barge_in_s = t
            self._candidate = turn

    def _backchannel(self, event: dict[str, Any]) -> None:
        """A listener's word: the pause it made is neither a barge-in nor a false alarm."""
        turn = event.get("turn")
        self.backchannels.append(RecordedOverlap(float(event["t"]), str(event["text"]), turn))
        if turn is not None and self._candidate == turn:
            self._turn(turn).barge_in_s = None
            self._candidate = None

    def _open_speech(self) -> RecordedSpeech | None:
        return self.speech[-1] if self.speech and self.speech[-1].end_s is None else None

    def _transcribed(self, text: str) -> None:
        """Spoken input belongs to the latest utterance that ended with its transcript still due;
        transcripts come in order, so the ones before it gave no input."""
        for index in range(len(self.speech) - 1, -1, -1):
            speech = self.speech[index]
            if speech.end_s is not None and speech.transcript is None:
                speech.transcript = text
                self._no_words_before(index)
                return

    def _no_words_before(self, index: int) -> None:
        for speech in self.speech[:index]:
            if speech.end_s is not None and speech.transcript is None:
                speech.transcript = ""

    def _done(self, turn: int, text: str, metrics: dict[str, float]) -> None:
        recorded = self._turn(turn)
        recorded.done, recorded.told_heard, recorded.metrics = True, text, dict(metrics)
        recorded.false_barge_ins = int(metrics.get("false_barge_ins", 0))
        recorded.barge_in_s = None
        if self._candidate == turn:
            self._candidate = None

    # -- what was recorded ------------------------------------------------------------------------

    def answered(self) -> list[RecordedTurn]:
        """Every request that counted, in order (a discarded one is in no turn)."""
        return [turn for _, turn in sorted(self.turns.items()) if not turn.discarded]

    def discarded(self) -> list[RecordedTurn]:
        return [turn for _, turn in sorted(self.turns.items()) if turn.discarded]

    def utterances(self) -> list[RecordedSpeech]:
        """The utterances that ended."""
        return [speech for speech in self.speech if speech.end_s is not None]
