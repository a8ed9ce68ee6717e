"""Judging transcripts: is this real speech from the user, or noise or the assistant's own echo?"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.asr.transcript_words import spoken_words

_SENTENCE_END = re.compile(r"(?<![.])[.?!][\"')\]]*\s*$")  # "I was wondering..." trails off: not an end
_SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")
_TRAILING = re.compile(r"(\.\.|\u2026|[,;:\-\u2013\u2014])[\"')\]]*\s*$")  # "I was wondering...", "then,"
# Consonant spellings that sound alike, folded before comparing (in order); vowels are kept, since
# short words that differ only in a vowel ("wait", "wet") are different words to a listener.
_SOUNDS = (("ph", "f"), ("ck", "k"), ("wh", "w"), ("q", "k"), ("x", "ks"), ("z", "s"))
_SOFT_C = re.compile(r"c(?=[eiy])")
_DOUBLED = re.compile(r"(.)\1+")
SOUND_ALIKE = 0.75  # words whose sound keys differ in at most a quarter of their letters ("little", "littel")
ALIKE_LETTERS = 5  # shorter words must match exactly: "hold" is not "old", nor "wait" "wet"
SAME_STEM = (
    5  # words that begin with the same five letters are one word heard in part ("started", "starting")
)
FRAGMENT_WORDS = 3  # whisper turns a cut-off scrap of echo into a few words, of which only the first is right
ONSET_WORDS = 3  # echo reaches the mic while the assistant says it: the words just before the pause
FRAGMENT_S = 0.3  # voiced for less than this over the reply, it is a scrap of leaked echo
MAX_WORDS_PER_S = 8.0  # faster than anyone speaks: whisper guessing words into a scrap of sound
WHOLE_SENTENCE_WORDS = 5  # lead-ins before a pause ("Set a timer", "I was wondering") are shorter
# With whisper's full stop or question mark, four words make a whole sentence ("Are you still there?");
# lead-ins whisper punctuates are mostly shorter ("Set a timer.", "What's the weather?").
WHOLE_PUNCTUATED_WORDS = 4
# Articles, conjunctions and possessives leave a sentence hanging, whatever whisper's full stop says.
_HANGING_WORDS = frozenset(
    {"a", "an", "the", "and", "or", "but", "because", "if", "my", "your", "our", "their"}
)
# A question may end on one of these ("Where are you from?"), but only whisper's full stop says so.
_PREPOSITIONS = frozenset(
    {"of", "to", "for", "with", "about", "in", "on", "at", "from", "by", "into", "like", "than", "as"}
)


def is_meaningful(text: str) -> bool:
    """True if the transcript holds at least one word (a cough or click gives none)."""
    return bool(spoken_words(text))


def ends_a_sentence(text: str) -> bool:
    """True if whisper punctuated the transcript as a finished sentence (".", "?" or "!", not "...")."""
    return bool(_SENTENCE_END.search(text))


def is_sentence_long(text: str, words_at_least: int = WHOLE_SENTENCE_WORDS) -> bool:
    """True if the transcript's last sentence has at least ``words_at_least`` words and neither trails
    off ("...", ",") nor ends on a word no sentence ends with ("the", "and", "my"), nor, without whisper's
    full stop, on a preposition ("Tell me a short story of"); lead-ins ("Could you tell me") are shorter
    than WHOLE_SENTENCE_WORDS, and so is a scrap after a sentence ("What's the weather? In time?")."""
    words = spoken_words(_SENTENCE_BREAK.split(text.strip())[-1])
    hanging = _HANGING_WORDS if ends_a_sentence(text) else _HANGING_WORDS | _PREPOSITIONS
    ends_open = not words or words[-1] in hanging or bool(_TRAILING.search(text))
    return len(words) >= words_at_least and not ends_open


def sounds_like_echo(transcript: str, recently_played: str, at_pause: int, threshold: float = 0.8) -> bool:
    """True if the words heard are the assistant's own voice coming back through the mic.

    ``recently_played`` are the words around the pause; the first ``at_pause`` of them had been heard
    when the VAD heard speech. Echo either repeats a run of those words, in order and allowing for
    mishearings ("was a lot" for "was a little"), or is a short scrap that begins with a word the
    assistant was saying at that moment ("Once you're" for "Once upon a time"). A user who cuts in
    may reuse a word or two of the reply, but starts with their own.
    """
    heard = [_sound_key(word) for word in spoken_words(transcript)]
    if not heard:
        return False
    played = [_sound_key(word) for word in spoken_words(recently_played)]
    if _aligned_similarity(heard, played) / len(heard) >= threshold:
        return True
    at_onset = played[max(0, at_pause - ONSET_WORDS) : at_pause + 1]
    return len(heard) <= FRAGMENT_WORDS and any(_similarity(heard[0], word) for word in at_onset)


def is_fragment(transcript: str, voiced_s: float) -> bool:
    """True for a scrap too short to be someone cutting in: voiced for under FRAGMENT_S, or more words
    than could be said in the time.

    Echo that leaks past the canceller (a burst as it re-adapts) is a fraction of a syllable, which
    whisper turns into a word or three ("one step.", "We can walk." from 0.22 s); a user who means
    to stop the reply says more, and no faster than MAX_WORDS_PER_S.
    """
    return voiced_s < FRAGMENT_S or len(spoken_words(transcript)) > MAX_WORDS_PER_S * voiced_s


def _sound_key(word: str) -> str:
    """A rough key of how a word sounds: alike consonant spellings folded, doubled letters made single."""
    key = _SOFT_C.sub("s", word.replace("'", "")).replace("c", "k")
    for spelling, sound in _SOUNDS:
        key = key.replace(spelling, sound)
    return _DOUBLED.sub(r"\1", key) or word


def _similarity(a: str, b: str) -> float:
    """1 for the same sound key, down to SOUND_ALIKE for long near-homophones, else 0."""
    if a == b:
        return 1.0
    if min(len(a), len(b)) < ALIKE_LETTERS:
        return 0.0
    if a[:SAME_STEM] == b[:SAME_STEM]:
        return SOUND_ALIKE
    score = 1.0 - edit_distance(a, b) / max(len(a), len(b))
    return score if score >= SOUND_ALIKE else 0.0


def _aligned_similarity(heard: list[str], played: list[str]) -> float:
    """The best in-order pairing of heard with played words, each pair scored by how alike they sound."""
    row = [0.0] * (len(played) + 1)
    for word in heard:
        diagonal = 0.0
        for j, other in enumerate(played, start=1):
            diagonal, row[j] = row[j], max(row[j], row[j - 1], diagonal + _similarity(word, other))
    return row[-1]


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Items (characters of a word, words of a text) inserted, dropped or changed to turn ``a`` into ``b``."""
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (char != other))
    return row[-1]
