"""The rules of a turn (docs/architecture.md §1.3 to 1.6): what the next request carries after a turn.

``Conversation`` is a pure state machine. Every change goes through an event it records, so the
session log can store those events and :meth:`Conversation.from_events` rebuilds the same state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from voice.conversation.context_window import ContextBudget, estimate_tokens, first_kept
from voice.conversation.items import (
    NOT_RUN_INTERRUPTED,
    AssistantText,
    Item,
    ToolCall,
    ToolResult,
    UserText,
)
from voice.conversation.ledger import PlaybackLedger
from voice.conversation.log_records import (
    BackchannelHeard,
    BudgetShrunk,
    HistoryTrimmed,
    HoldChanged,
    InputReceived,
    InputRepeated,
    InputStopped,
    InputWithdrawn,
    ItemCommitted,
    LogRecord,
    PartFailed,
    ReplyHeard,
    SpeechIgnored,
    TurnEnded,
    TurnFailed,
    TurnLost,
    TurnStarted,
)
from voice.errors import ProtocolError

NOT_RUN_UNFINISHED = "Not run: the turn ended before it ran."
PENDING_INPUT_CHARS = 2000  # unanswered input a request carries: a few minutes of speech
SEEN_IDS_KEPT = 4096  # input ids remembered for dropping retries; a retry comes within seconds, not weeks


@dataclass(frozen=True)
class Request:
    """One LLM request: the whole conversation to send (system prompt left out)."""

    turn: int
    items: tuple[Item, ...]


@dataclass
class _ActiveTurn:
    turn: int
    reply: PlaybackLedger = field(default_factory=PlaybackLedger)  # the one copy of the reply's text
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, ToolResult] = field(default_factory=dict)
    committed_calls: bool = False
    heard: str = ""  # the reply's progress as last recorded: what a lost turn keeps
    heard_s: float | None = None


def merge_inputs(first: str | None, second: str) -> str:
    """The user kept talking: two utterances become one user item.

    Input nobody answers (a model that keeps failing, a television the microphone keeps hearing) keeps
    merging: only the latest PENDING_INPUT_CHARS of what came before are kept, from a word's start, and
    the new input always whole.
    """
    earlier, latest = (first or "").strip(), second.strip()
    room = PENDING_INPUT_CHARS - len(latest) - 1
    if earlier and len(earlier) > room:
        start = len(earlier) - max(room, 0)
        kept = earlier[start:]
        earlier = kept if earlier[start - 1] == " " else kept.partition(" ")[2]
    return " ".join(part for part in (earlier.strip(), latest) if part)


class Conversation:
    """History, the user input not yet answered, and the turn in flight.

    With a ``budget``, each request carries only as much recent history as fits; what it leaves out is
    forgotten here too (the session log keeps it), so memory stays flat over a conversation of weeks.
    """

    def __init__(self, budget: ContextBudget | None = None, *, turns_before: int = 0) -> None:
        """``turns_before``: turns are numbered on from there (a conversation following another in
        the same process, so late output of the old one's turns can never pass for the new one's)."""
        self._budget = budget
        self._history: list[Item] = []  # the items requests still carry
        self._forgotten = 0  # items trimmed off the front of the history so far
        self._pending_input: str | None = None
        self._seen_ids: dict[str, None] = {}  # the latest SEEN_IDS_KEPT, oldest first
        self._inputs = 0
        self._turns = turns_before
        self._active: _ActiveTurn | None = None
        self._last_completed_calls = False
        self._outbox: list[LogRecord] = []

    @classmethod
    def from_events(cls, events: Iterable[LogRecord], budget: ContextBudget | None = None) -> Conversation:
        """Rebuild a conversation from its recorded events.

        A turn the log leaves open (the process was killed mid-reply) is closed as a user's cut would
        close it, keeping the heard text its last progress recorded; the closing events are recorded
        (``take_events``) so a resumed log says how the turn ended.
        """
        conversation = cls(budget)
        for event in events:
            conversation.replay(event)
        lost = conversation._active
        if lost is not None:
            if lost.heard:
                conversation._commit_turn(lost, lost.heard, interrupted=True, not_run=NOT_RUN_INTERRUPTED)
            conversation._record(TurnLost(lost.turn, lost.heard, lost.heard_s))
        return conversation

    def replay(self, event: LogRecord) -> None:
        """Take one event as the log recorded it (nothing new is recorded): a reader follows the log."""
        self._apply(event)

    @property
    def next_items(self) -> tuple[Item, ...]:
        """What the next request would carry: the history, then the input not yet answered."""
        pending = (UserText(self._pending_input),) if self._pending_input else ()
        return (*self._history, *pending)

    # -- what the state is ------------------------------------------------------------------------

    @property
    def history(self) -> tuple[Item, ...]:
        """The history the next request carries (older items were trimmed to fit the budget)."""
        return tuple(self._history)

    @property
    def last_said(self) -> str:
        """The assistant's last words in the history, as the user heard them ('' before any)."""
        said = [item.text for item in self._history if isinstance(item, AssistantText) and item.text]
        return said[-1] if said else ""

    @property
    def budget(self) -> ContextBudget | None:
        return self._budget

    @property
    def pending_input(self) -> str | None:
        """User text not yet answered (kept after a cancel in which nothing was heard)."""
        return self._pending_input

    @property
    def active_turn(self) -> int | None:
        return self._active.turn if self._active else None

    @property
    def reply(self) -> PlaybackLedger:
        """The reply of the turn in flight: its text, and which of its words were heard."""
        return self._require_active("reply").reply

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls the turn in flight proposed so far (the one list of them)."""
        return tuple(self._require_active("tool calls").calls)

    @property
    def turns(self) -> int:
        return self._turns

    @property
    def awaits_follow_up(self) -> bool:
        """The last turn completed with tool calls, so the model should now see their results."""
        return self._last_completed_calls and self._active is None

    def has_seen(self, input_id: str) -> bool:
        """True if an input with this id was already taken (in this session or before it was resumed)."""
        return input_id in self._seen_ids

    @property
    def inputs(self) -> int:
        """How many inputs this conversation took, its resumed log included (fresh ids count on from it)."""
        return self._inputs

    def take_events(self) -> list[LogRecord]:
        """Events recorded since the last call, for the session log."""
        events, self._outbox = self._outbox, []
        return events

    # -- starting turns ---------------------------------------------------------------------------

    def submit(self, text: str, input_id: str | None = None) -> Request | None:
        """New user input; returns the request to send, or None for a duplicate id or nothing to ask."""
        if not self.receive(text, input_id):
            return None
        return self.start()

    def receive(self, text: str, input_id: str | None = None) -> bool:
        """Take user input without starting a turn (it merges into pending input); False for a duplicate."""
        if input_id is not None and input_id in self._seen_ids:
            self.note_duplicate(input_id)
            return False
        if self._active is not None:
            raise ProtocolError(f"user input during turn {self._active.turn}: cancel the turn first")
        if text.strip() or input_id is not None:
            self._record(InputReceived(text.strip(), input_id))
        return True

    def start(self) -> Request | None:
        """Start a turn answering the pending input, or None when nothing waits for an answer."""
        if self._active is not None:
            raise ProtocolError(f"a new turn during turn {self._active.turn}")
        return self._start() if self._pending_input else None

    def stop(self, text: str, input_id: str | None = None) -> bool:
        """The user said a stop phrase (its turn already cut): their words, joined to any input pending,
        enter the history as their item, so the model knows next time, and no turn starts. False for a
        duplicate."""
        if not self.receive(text, input_id):
            return False
        if self._pending_input:
            self._record(ItemCommitted(UserText(self._pending_input)))
        self._record(InputStopped(input_id, text.strip()))
        return True

    def note_backchannel(self, text: str, t: float | None = None) -> None:
        """The user said only a listener's word over a reply: the log keeps it; the history does not."""
        self._record(BackchannelHeard(text.strip(), t))

    def note_ignored(self, text: str, why: str, t: float | None = None) -> None:
        """Speech that was not the user's words (a cough, echo, a scrap): the log says what it was."""
        self._record(SpeechIgnored(text.strip(), why, t))

    def note_duplicate(self, input_id: str) -> None:
        """An input came again with a known id: the log says it was seen and dropped."""
        self._record(InputRepeated(input_id))

    def follow_up(self) -> Request:
        """Start the turn that shows the model its tool results (no new user input)."""
        if not self.awaits_follow_up:
            raise ProtocolError("follow_up() without a completed turn that made tool calls")
        return self._start()

    def _start(self) -> Request:
        self._record(TurnStarted(self._turns + 1))
        return self._request()

    def _request(self) -> Request:
        """The active turn's request: the history that fits the budget, then the pending input."""
        pending = [UserText(self._pending_input)] if self._pending_input else []
        if self._budget is not None:
            keep = first_kept(self._history, pending, self._budget, 0)
            if keep:
                self._record(HistoryTrimmed(self._forgotten + keep))
        return Request(self._turns, (*self._history, *pending))

    def trim_after_refusal(self) -> Request:
        """The server refused the active turn's request as too large: shrink the budget and trim again."""
        self._require_active("trim")
        pending = [UserText(self._pending_input)] if self._pending_input else []
        refused = estimate_tokens((*self._history, *pending))
        self._record(BudgetShrunk((self._budget or ContextBudget(refused)).shrunk(refused).tokens))
        return self._request()

    # -- during a turn ----------------------------------------------------------------------------

    def add_text(self, delta: str) -> None:
        self._require_active("reply text").reply.add_text(delta)

    def add_tool_call(self, call: ToolCall) -> None:
        """A tool call the model finished proposing (half-streamed calls never get here)."""
        self._require_active("tool call").calls.append(call)

    def add_tool_result(self, result: ToolResult) -> None:
        active = self._require_active("tool result")
        if result.id not in {call.id for call in active.calls}:
            raise ProtocolError(f"tool result for unknown call {result.id!r}")
        active.results[result.id] = result

    def note_heard(self, heard: str, heard_s: float | None = None) -> None:
        """How much of the reply in flight the user has heard so far, for the log to keep."""
        active = self._require_active("heard progress")
        heard = heard.strip()
        if not active.reply.text.strip().startswith(heard):
            raise ProtocolError(f"heard text {heard[:40]!r} is not a prefix of the reply")
        self._record(ReplyHeard(active.turn, heard, heard_s))

    def discard_reply(self) -> None:
        """Forget what the turn streamed so far: a failed attempt is about to be retried."""
        active = self._require_active("discard")
        active.reply, active.calls, active.results = active.reply.for_retry(), [], {}

    # -- ending turns -----------------------------------------------------------------------------

    def complete(self) -> None:
        """The reply streamed and played in full: its items enter the history as generated."""
        active = self._require_active("completion")
        reply = active.reply.text.strip()
        self._commit_turn(active, reply, interrupted=False, not_run=NOT_RUN_UNFINISHED)
        self._record(TurnEnded(active.turn, False, reply, reply))

    def cut_in(self, heard: str, cut_s: float | None = None, *, reply_finished: bool = False) -> None:
        """The user cut in: only what was heard (and complete tool calls) crosses into the history.

        With nothing crossing, no assistant item is written and the user's input stays pending, to be
        merged with what they say next. A finished reply the user heard whole is carried whole, not
        marked interrupted (they cut in while its tools ran).
        """
        active = self._require_active("cut in")
        heard = heard.strip()
        generated = active.reply.text.strip()
        if not generated.startswith(heard):
            raise ProtocolError(f"heard text {heard[:40]!r} is not a prefix of the reply")
        if heard or active.calls:
            whole = reply_finished and heard == generated
            self._commit_turn(active, heard, interrupted=not whole, not_run=NOT_RUN_INTERRUPTED)
        self._record(TurnEnded(active.turn, True, generated, heard, cut_s))

    def withdraw_input(self, pending: str | None) -> None:
        """The last input was the start of a longer utterance, still being said: pending input goes back
        to ``pending`` (what it was before), so the whole utterance is not merged with its own start."""
        if self._active is not None:
            raise ProtocolError(f"an input withdrawn during turn {self._active.turn}")
        self._record(InputWithdrawn(pending))

    def fail(self, reason: str, heard: str, dispatch: str | None = None) -> None:
        """The turn failed: nothing of it enters the history, and the user's input stays pending.

        A failure is not an interruption: the next thing the user says merges with the unanswered input.
        """
        active = self._require_active("failure")
        self._record(TurnFailed(active.turn, reason, dispatch, active.reply.text.strip(), heard.strip()))

    def note_failure(self, part: str, message: str) -> None:
        """Record that a part of the assistant failed (the log keeps what the user met)."""
        self._record(PartFailed(part, message))

    def note_hold(self, hold_ms: int, was_ms: int, why: str) -> None:
        """The hold before a reply to a turn ended at a pause changed (the log says when and why)."""
        self._record(HoldChanged(hold_ms, was_ms, why))

    def _commit_turn(self, active: _ActiveTurn, text: str, *, interrupted: bool, not_run: str) -> None:
        if self._pending_input:
            self._record(ItemCommitted(UserText(self._pending_input)))
        if text:
            self._record(ItemCommitted(AssistantText(text, interrupted)))
        for call in active.calls:
            self._record(ItemCommitted(call))
        for call in active.calls:
            result = active.results.get(call.id) or ToolResult(call.id, not_run, failed=True)
            self._record(ItemCommitted(result))

    def _require_active(self, what: str) -> _ActiveTurn:
        if self._active is None:
            raise ProtocolError(f"{what} with no turn in flight")
        return self._active

    # -- the reducer ------------------------------------------------------------------------------

    def _record(self, event: LogRecord) -> None:
        self._apply(event)
        self._outbox.append(event)

    def _apply(self, event: LogRecord) -> None:
        match event:
            case InputReceived(text=text, input_id=input_id):
                self._inputs += 1
                if input_id is not None:
                    self._seen_ids[input_id] = None
                    if len(self._seen_ids) > SEEN_IDS_KEPT:
                        del self._seen_ids[next(iter(self._seen_ids))]
                self._pending_input = merge_inputs(self._pending_input, text) or None
            case InputWithdrawn(pending=pending):
                self._pending_input = pending
            case TurnStarted(turn=turn):
                self._turns = turn
                self._active = _ActiveTurn(turn)
                self._last_completed_calls = False
            case ItemCommitted(item=item):
                self._history.append(item)
                if isinstance(item, UserText):
                    self._pending_input = None
                if isinstance(item, ToolCall) and self._active is not None:
                    self._active.committed_calls = True
            case TurnEnded(cancelled=cancelled):
                made_calls = self._active is not None and self._active.committed_calls
                self._last_completed_calls = not cancelled and made_calls
                self._active = None
            case ReplyHeard(turn=turn, heard=heard, heard_s=heard_s):
                if self._active is not None and self._active.turn == turn:
                    self._active.heard, self._active.heard_s = heard, heard_s
            case TurnFailed() | TurnLost():
                self._last_completed_calls = False
                self._active = None
            case BudgetShrunk(tokens=tokens):
                self._budget = ContextBudget(tokens)
            case HistoryTrimmed(first_kept=first):
                del self._history[: first - self._forgotten]
                self._forgotten = first
            case (
                InputRepeated()
                | PartFailed()
                | HoldChanged()
                | BackchannelHeard()
                | SpeechIgnored()
                | InputStopped()
            ):
                pass
