"""The engine's phases are its transition table: what clients hear of them, and the diagram drawn from it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tests.support.room import REPLY, Room, ask, ended_early_and_answered
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoiceStarted
from voice.chat.view_widgets import LABELS as VIEW_LABELS
from voice.client_events import StateChanged, StreamEvent
from voice.engine.actions import CancelTurn, PausePlayback, ResumePlayback
from voice.engine.diagram import BEGIN, END, state_diagram
from voice.engine.engine import TRANSITIONS
from voice.engine.inputs import CancelReply, TranscriptReady
from voice.engine.phases import Phase, with_reply, without_reply

ROOT = Path(__file__).resolve().parents[2]
KIOSK_STATES = {"muted", "asleep"}  # the kiosk's own states, beside the engine's


def told(events: list[StreamEvent]) -> list[str]:
    """What a client saw: event types, with a state change shown as its state."""
    return [f"state:{e.state}" if isinstance(e, StateChanged) else e.type for e in events]


def speaking_room() -> Room:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 4_000)
    room.engine.take_events()
    return room


def talk_over_the_reply(room: Room, transcript: str) -> tuple[list[str], list[str]]:
    """The user talks over the reply for a second: what clients hear while they talk, and once the
    transcript is back."""
    onset = room.clock
    assert room.tick(VoiceStarted(onset)) == [PausePlayback(1)]
    while_talking = told(room.engine.take_events())
    assert room.engine.phase is Phase.PAUSED
    second = AudioBlock(np.zeros(ENGINE_RATE, np.float32), ENGINE_RATE, onset)
    room.tick(VoiceEnded(onset + ENGINE_RATE, second))
    room.engine.handle(TranscriptReady(2, transcript))
    return while_talking, told(room.engine.take_events())


def test_talking_over_the_reply_is_told_paused_and_a_cough_resumes_it_speaking() -> None:
    room = speaking_room()

    while_talking, after = talk_over_the_reply(room, "[coughing]")

    assert while_talking == ["input.speech_started", "state:paused"]
    assert after == [
        "input.speech_stopped",
        "state:thinking",
        "input.ignored",  # what it was, so nothing said over a reply goes untold
        "response.resumed",
        "state:speaking",
    ]
    assert room.engine.phase is Phase.SPEAKING


def test_words_over_the_reply_cut_it_and_are_answered_in_the_order_clients_rely_on() -> None:
    room = speaking_room()

    _, after = talk_over_the_reply(room, "Sorry, I meant on Sunday.")

    assert after == [
        "input.speech_stopped",
        "state:thinking",
        "response.interrupted",
        "input.transcript",
        "response.created",
        "output_audio.stopped",  # where the cut reply's audio stopped: told last, as the runtime did
    ]


def test_a_stop_while_the_user_talks_over_the_reply_leaves_them_talking() -> None:
    room = speaking_room()
    room.tick(VoiceStarted(room.clock))
    room.engine.take_events()

    actions = room.engine.handle(CancelReply())

    assert actions[0] == CancelTurn(1)
    assert room.engine.phase is Phase.USER_SPEAKING
    assert told(room.engine.take_events()) == [
        "response.interrupted",
        "state:user_speaking",
        "output_audio.stopped",
    ]


def test_going_on_within_the_hold_tells_nothing_and_the_user_is_still_speaking() -> None:
    room = Room()
    ended_early_and_answered(room)
    assert room.engine.phase is Phase.HOLDING
    room.engine.take_events()

    room.tick(VoiceStarted(room.clock))

    assert room.engine.phase is Phase.USER_SPEAKING
    assert room.engine.take_events() == []  # the user never stopped, as far as any client knows


def test_a_hold_that_passes_plays_the_held_reply() -> None:
    room = Room()
    ended_early_and_answered(room)

    while room.engine.phase is Phase.HOLDING:
        actions = room.tick()

    assert ResumePlayback(1) in actions
    assert room.engine.phase is Phase.SPEAKING


def test_every_state_clients_hear_is_one_the_page_and_the_terminal_view_name() -> None:
    states = {phase.told for phase in Phase} - {None}
    page = (ROOT / "voice/kiosk/page.html").read_text(encoding="utf-8")
    labels = re.search(r"const LABELS = \{(.*?)\};", page, re.S)
    assert labels is not None
    page_states = set(re.findall(r"(\w+):", labels.group(1)))

    assert states | KIOSK_STATES <= page_states
    assert states <= set(VIEW_LABELS)
    assert Phase.HOLDING.told is None  # a hold is told only once it has passed


def test_every_phase_is_reached_from_listening_and_leads_back_to_it() -> None:
    arrows = {(start, end) for (start, _), transition in TRANSITIONS.items() for end in transition.to}

    def reachable(start: Phase, forward: bool) -> set[Phase]:
        seen, todo = {start}, [start]
        while todo:
            here = todo.pop()
            for a, b in arrows:
                there = b if forward and a is here else a if not forward and b is here else None
                if there is not None and there not in seen:
                    seen.add(there)
                    todo.append(there)
        return seen

    assert reachable(Phase.LISTENING, forward=True) == set(Phase)
    assert reachable(Phase.LISTENING, forward=False) == set(Phase)
    assert all(start not in transition.to for (start, _), transition in TRANSITIONS.items())


def test_the_docs_state_diagram_is_the_one_the_table_draws() -> None:
    document = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    _, _, rest = document.partition(BEGIN)
    drawn, _, _ = rest.partition(END)

    assert drawn.strip() == state_diagram(), "redraw it: python -m voice.engine.diagram docs/architecture.md"


def test_with_no_reply_left_a_talking_user_goes_on_talking_and_a_due_transcript_keeps_it_thinking() -> None:
    assert without_reply(Phase.PAUSED, transcribing=False) is Phase.USER_SPEAKING
    assert without_reply(Phase.USER_SPEAKING, transcribing=True) is Phase.USER_SPEAKING
    assert without_reply(Phase.SPEAKING, transcribing=True) is Phase.THINKING
    assert without_reply(Phase.HOLDING, transcribing=False) is Phase.LISTENING


def test_a_reply_in_flight_speaks_while_its_audio_plays_unless_the_user_talks_or_the_hold_waits() -> None:
    assert with_reply(Phase.THINKING, audible=True) is Phase.SPEAKING
    assert with_reply(Phase.SPEAKING, audible=False) is Phase.THINKING
    assert with_reply(Phase.PAUSED, audible=True) is Phase.PAUSED
    assert with_reply(Phase.HOLDING, audible=False) is Phase.HOLDING
