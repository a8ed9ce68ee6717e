"""What words said over a reply ask for: nothing (a listener's backchannel), silence (a stop), or the turn.

A listener says "yeah", "right, right" or "I see" to show they follow, not to take the turn; "stop" or
"never mind" asks the assistant to be quiet, not to answer. Both are matched on the whole transcript,
normalised: case, punctuation and whisper's sound notes do not count, nor spaces and hyphens inside a
phrase ("uh huh" is "uh-huh", "alright" is "all right"), and a run of phrases is one ("right, right",
"okay, yeah"). A run with a stop phrase in it is a stop ("okay, stop"); anything else is a cut-in, so
a stop phrase followed by more words ("wait, make it shorter") is answered as ever. Words that disagree
or correct ("no", "actually", "but") never make a backchannel, whatever the list says: a listener's
"yeah" cutting a story costs a repeat, a user's "no" thrown away costs the conversation.

Pure: the lists come from the config (``[turn] backchannels``, ``stop_phrases``).
"""

from __future__ import annotations

import enum

from voice.asr.listener_words import LISTENER_PHRASES
from voice.asr.transcript_words import phrase_key, word_keys

DEFAULT_BACKCHANNELS = LISTENER_PHRASES  # the listener words whisper's second look listens for
DEFAULT_STOP_PHRASES = (
    "stop",
    "wait",
    "hold on",
    "be quiet",
    "that's enough",
    "never mind",
    "shut up",
    "ok stop",
)
# word_keys of words that disagree or correct; "uh uh" is whisper's "Uh-uh.", a no ("uh-huh" is "uh huh")
CORRECTING_WORDS = frozenset({"no", "nope", "nah", "not", "wait", "actually", "but", "uh uh"})


def correcting_word(text: str) -> str | None:
    """The first word of ``text`` that disagrees or corrects ("No, in Celsius."), or None."""
    words = word_keys(text)
    pairs = (" ".join(words[at : at + 2]) for at in range(len(words) - 1))
    return next((word for word in (*words, *pairs) if word in CORRECTING_WORDS), None)


class Overlap(enum.Enum):
    """The verdict on words said over a reply."""

    BACKCHANNEL = "backchannel"  # the reply goes on; nothing is asked, nothing enters the history
    STOP = "stop"  # the reply is cut; the words enter the history, and nothing is asked
    CUT_IN = "cut_in"  # the reply is cut and the words are answered


class OverlapPhrases:
    """The backchannels and stop phrases in effect, and the verdict on a transcript."""

    def __init__(
        self,
        backchannels: tuple[str, ...] = DEFAULT_BACKCHANNELS,
        stop_phrases: tuple[str, ...] = DEFAULT_STOP_PHRASES,
    ) -> None:
        self.backchannels = backchannels
        self.stop_phrases = stop_phrases
        self._backchannel_keys = frozenset(key for key in map(phrase_key, backchannels) if key)
        self._stop_keys = frozenset(key for key in map(phrase_key, stop_phrases) if key)

    def verdict(self, text: str) -> Overlap:
        """What the transcript ``text`` asks for, if it was said over a reply."""
        words = word_keys(text)
        if not words:
            return Overlap.CUT_IN  # no words: the echo judgement's to call, never a listener's
        # covered[i]: the kinds of phrase runs that say exactly words[:i] (empty: none does)
        covered: list[set[bool]] = [set() for _ in range(len(words) + 1)]
        covered[0].add(False)  # False: no stop phrase in the run so far
        for end in range(1, len(words) + 1):
            for start in range(end):
                if not covered[start]:
                    continue
                key = "".join(words[start:end])
                if key in self._stop_keys:
                    covered[end].add(True)
                elif key in self._backchannel_keys:
                    covered[end] |= covered[start]
        whole = covered[-1]
        if whole == {False}:
            return Overlap.CUT_IN if correcting_word(text) else Overlap.BACKCHANNEL
        return Overlap.STOP if whole else Overlap.CUT_IN
