"""Prints the conversation as it happens: what the user said, what the assistant said and where it was cut."""

from __future__ import annotations

from collections.abc import Callable

from voice.engine.engine import Engine


class Narrator:
    """Call :meth:`update` after each step; it prints each finished utterance and turn once."""

    def __init__(self, engine: Engine, write: Callable[[str], None] = print) -> None:
        self._engine = engine
        self._write = write
        self._utterances = 0
        self._turns = 0

    def update(self) -> None:
        speech = self._engine.speech
        while self._utterances < len(speech) and speech[self._utterances].transcript is not None:
            text = speech[self._utterances].transcript
            self._write(f"you:       {text}" if text else "you:       (no words: a noise)")
            self._utterances += 1
        turns = self._engine.turns
        finished = len(turns) - (1 if self._engine.active_turn is not None else 0)
        while self._turns < finished:
            turn = turns[self._turns]
            if turn.error:
                self._write(f"assistant: (the LLM failed: {turn.error})")
            elif turn.interrupted:
                self._write(f"assistant: {turn.spoken or '(cut before a word was heard)'}  [interrupted]")
            elif turn.spoken:
                self._write(f"assistant: {turn.spoken}")
            self._turns += 1
