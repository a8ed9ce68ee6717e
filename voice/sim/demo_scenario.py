"""The `voice demo` conversation: a question, then a correction cutting in on the answer."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from voice.sim.scenario import RealLlm, Scenario, UserCue

QUESTION_WAV = "what-weather.wav"
FOLLOW_UP_WAV = "sorry-sunday.wav"
INTERRUPT_AFTER_MS = 1200.0


def demo_scenario(llm: RealLlm) -> Scenario:
    """Ask about tomorrow's weather, then cut in 1.2 s into the answer to ask about Sunday."""
    folder = Path(str(resources.files("voice.sim") / "demo"))
    user = (
        UserCue(folder / QUESTION_WAV, at_s=0.5),
        UserCue(folder / FOLLOW_UP_WAV, during_reply=1, after_ms=INTERRUPT_AFTER_MS),
    )
    return Scenario(folder / "demo.json", llm, user, end_s=30.0)
