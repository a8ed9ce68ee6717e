"""While the user talks over a reply, its next sentences wait to be synthesized.

Paused for the user's voice, the reply has its audio ahead of it already; what is urgent is whisper
judging the words (a listener's "yeah" resumes the reply as soon as they are heard). On two cores,
piper synthesizing a sentence at the same time made that judging take twice as long on the real loop
(150-175 ms alone, 370-400 ms beside it), and the reply's pause as long. So the runner holds a sentence
of the paused turn before it starts, until the reply resumes or is cut, and at most ``AT_MOST_S``.
A sentence already being synthesized runs on; another turn's is never held (a new reply waits for
nothing).
"""

from __future__ import annotations

import threading

AT_MOST_S = 2.0  # a pause is judged within about a second; past this, a stuck hold must not silence a reply


class SynthesisHold:
    """Held for one turn while its playback is paused; the TTS worker waits on it before each sentence."""

    def __init__(self) -> None:
        self._released = threading.Condition()
        self._turn: int | None = None

    def hold(self, turn: int | None) -> None:
        """``turn``'s playback paused for the user's voice (None: no turn is being synthesized)."""
        with self._released:
            self._turn = turn

    def release(self) -> None:
        """The reply resumed, stopped or was cut: its sentences go on."""
        with self._released:
            self._turn = None
            self._released.notify_all()

    def wait_out(self, turn: int, at_most_s: float = AT_MOST_S) -> bool:
        """Before synthesizing a sentence of ``turn``: wait while it is held. False if it still was."""
        with self._released:
            return self._released.wait_for(lambda: self._turn != turn, at_most_s)
