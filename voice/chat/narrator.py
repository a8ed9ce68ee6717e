"""Prints the conversation as it happens: what the user said, what the assistant said and where it was cut."""

from __future__ import annotations

from collections.abc import Callable

from voice.engine.engine import Engine


class Narrator:
    """Call :meth:`update` after each step; it prints each finished utterance and turn once."""

    def __init__(self, engine: Engine, write: Callable[[str], None] = print) -> None:
        self._engine = engine
        self._write = write
        self._printed_speech = -1  # start sample of the last utterance printed
        self._printed_turn = 0

    def update(self) -> None:
        for record in self._engine.speech:
            if record.start > self._printed_speech and record.transcript is not None:
                text = record.transcript
                self._write(f"you:       {text}" if text else "you:       (no words: a noise)")
                self._printed_speech = record.start
        for turn in self._engine.turns:
            if turn.turn <= self._printed_turn or turn.turn == self._engine.active_turn:
                continue
            if turn.error:
                self._write(f"assistant: (failed: {turn.error})")
            elif turn.interrupted:
                self._write(f"assistant: {turn.spoken or '(cut before a word was heard)'}  [interrupted]")
            elif turn.spoken:
                self._write(f"assistant: {turn.spoken}")
            self._printed_turn = turn.turn
