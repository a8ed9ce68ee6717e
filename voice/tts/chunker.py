"""Cuts a streamed LLM reply into speakable chunks for the synthesizer.

The first chunk ends at the first clause break (",", ";", ":") or sentence end once it holds a few words,
or, in a first sentence that runs on without one, before a word that opens a phrase ("with", "and", "to")
once it holds a few more, so speech starts early; later chunks are whole sentences. Cuts happen only
between whitespace-separated words, and a word counts as complete only once whitespace follows it, so
"$3." never parts from "50". Joined by single spaces, the chunks hold exactly the reply's words in order:
the playback ledger relies on that to pair each word with its audio span.
"""

from __future__ import annotations

import re

from voice.errors import ConfigError

_WORD = re.compile(r"\S+")
_CLOSERS = "\"')]}\u201d\u2019\u00bb"  # also the closing curly quotes and guillemet
_SENTENCE_ENDS = (".", "!", "?", "…")
_CLAUSE_ENDS = (",", ";", ":")
# A period after these ends an abbreviation, not a sentence ("Dr. Smith").
_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "approx", "inc", "ltd",
        "co", "corp", "dept", "est", "fig", "no", "vol", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
        "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
    }
)  # fmt: skip
# Words a spoken phrase starts with: a first chunk may end before one, where a speaker may pause too.
_PHRASE_OPENERS = frozenset(
    {
        "and", "but", "or", "so", "because", "with", "without", "for", "from", "to", "in", "on", "at", "by",
        "about", "which", "that", "who", "when", "while", "where", "if", "than", "as", "until", "after",
        "before", "during", "into", "through",
    }
)  # fmt: skip
# Initials and dotted acronyms: "J.", "U.S.", "a.m.", "e.g.".
_DOTTED_LETTERS = re.compile(r"(?:[^\W\d_]\.)+")


def ends_sentence(word: str) -> bool:
    """True if ``word`` closes a sentence: a final "." (not an abbreviation), "!", "?" or ellipsis."""
    bare = word.rstrip(_CLOSERS)
    if not bare.endswith(_SENTENCE_ENDS):
        return False
    if bare.endswith(("!", "?", "…", "..")):
        return True
    return not (_DOTTED_LETTERS.fullmatch(bare) or bare[:-1].lower() in _ABBREVIATIONS)


def ends_clause(word: str) -> bool:
    """True if ``word`` closes a clause or a sentence."""
    return word.rstrip(_CLOSERS).endswith(_CLAUSE_ENDS) or ends_sentence(word)


class SpeechChunker:
    """Feed it the reply's deltas as they stream; it hands back each chunk as soon as it is speakable.

    ``first_clause_words`` is how many words the first chunk needs before a clause break may end it, and
    ``first_phrase_words`` (None: never) how many before it may end ahead of a word opening a phrase.
    ``max_words`` bounds a chunk when a sentence runs on without an end, so synthesis never waits long.
    """

    def __init__(
        self, *, first_clause_words: int = 3, first_phrase_words: int | None = 5, max_words: int = 40
    ) -> None:
        if first_clause_words < 1 or max_words < first_clause_words:
            raise ConfigError(
                f"chunk sizes must satisfy 1 <= first_clause_words <= max_words, "
                f"got {first_clause_words} and {max_words}"
            )
        if first_phrase_words is not None and first_phrase_words < 1:
            raise ConfigError(f"first_phrase_words must be at least 1, got {first_phrase_words}")
        self._first_clause_words = first_clause_words
        self._first_phrase_words = first_phrase_words
        self._max_words = max_words
        self._pending = ""
        self._started = False

    def feed(self, delta: str) -> list[str]:
        """Take the next piece of the reply; return the chunks it completed, in order."""
        self._pending += delta
        chunks: list[str] = []
        words: list[str] = []
        consumed = 0
        for match in _WORD.finditer(self._pending):
            if match.end() == len(self._pending):
                break  # the word may go on in the next delta
            if self._opens_phrase_after(words, match.group()):
                chunks.append(" ".join(words))
                words = []
                consumed = match.start()
                self._started = True
            words.append(match.group())
            if self._ends_chunk(words):
                chunks.append(" ".join(words))
                words = []
                consumed = match.end()
                self._started = True
        self._pending = self._pending[consumed:]
        return chunks

    def flush(self) -> list[str]:
        """The reply is complete: return what is left as a last chunk, and start afresh."""
        words = self._pending.split()
        self._pending = ""
        self._started = False
        return [" ".join(words)] if words else []

    def _opens_phrase_after(self, words: list[str], word: str) -> bool:
        """``word`` opens a phrase, and the first chunk is long enough to end before it."""
        enough = self._first_phrase_words
        if self._started or enough is None or len(words) < enough:
            return False
        return word.lower() in _PHRASE_OPENERS

    def _ends_chunk(self, words: list[str]) -> bool:
        if len(words) >= self._max_words:
            return True
        if self._started:
            return ends_sentence(words[-1])
        return len(words) >= self._first_clause_words and ends_clause(words[-1])
