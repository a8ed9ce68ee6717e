"""SVG screenshots of `voice chat`'s terminal view for the README, drawn from recorded events.

The view is driven headless by Textual's pilot with the event stream a simulated conversation
published (tests/chat/recorded, from `voice simulate`): no devices, no models. Run from the checkout:
    python scripts/terminal_view_screenshot.py docs
It writes terminal-view.svg (a question, a reply cut twice, its struck words, timings) and
terminal-view-paused.svg (the reply paused while you talk over it) into that folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from voice.chat.terminal_view import ChatView
from voice.client_events import InputLevel, SpeechStarted, StreamEvent, event_from_json
from voice.engine.inputs import EngineInput

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "chat" / "recorded"
SIZE = (100, 28)
SESSION_LOG = "~/.local/state/voice/sessions/chat-20261202-113015.jsonl"


class Shown:
    """Controls that carry nothing out: the screenshots need only what the stream says."""

    def start(self, view: ChatView) -> None:
        view.say(
            "listening; talk any time (session log ~/.local/state/voice/sessions/chat-20261202-113015.jsonl)"
        )

    def send(self, event: EngineInput) -> None:
        pass

    def new_conversation(self) -> None:
        pass

    def stop(self) -> None:
        pass


def recorded(scenario: str) -> list[StreamEvent]:
    lines = (RECORDED / f"{scenario}.events.jsonl").read_text().splitlines()
    return [event_from_json(json.loads(line)) for line in lines]


async def shoot(events: list[StreamEvent], level: InputLevel, folder: Path, name: str) -> None:
    app = ChatView(Shown())
    async with app.run_test(size=SIZE) as pilot:
        for event in events:
            app.publish(event)
        app.publish(level)
        await pilot.pause()
        app.save_screenshot(name, str(folder))


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    events = recorded("two-interruptions")
    asyncio.run(shoot(events, InputLevel(-61.0, False, 23.0), folder, "terminal-view.svg"))
    second_cut = [i for i, event in enumerate(events) if isinstance(event, SpeechStarted)][2]
    paused = events[: second_cut + 2]  # the user's onset, then the state change it brings
    asyncio.run(shoot(paused, InputLevel(-21.5, True, 16.9), folder, "terminal-view-paused.svg"))


if __name__ == "__main__":
    main()
