"""A long story as an LLM's reply, to stop a process in the middle of."""

from __future__ import annotations

STORY = (
    "Once upon a time, in a village at the edge of a great forest, there lived an old clockmaker who "
    "never slept. Every night he walked the silent streets with a lantern, listening to the clocks of "
    "every house, and every morning he knew which of them had lost a minute and which had gained one. "
    "The children of the village thought he could hear time itself, and perhaps he could, for when he "
    "finally grew tired and sat down by the river, all the clocks of the village stopped with him."
)

WORDS_BEFORE_STOP = 6  # the log shows this many words heard before the signal is sent
