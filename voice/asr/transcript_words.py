"""How a transcript's words are read: lower case, without whisper's sound notes, one spelling a word.

Shared by what judges transcripts (voice.engine: echo, backchannels, stop phrases) and by ASR's own second
look at a listener's words (voice.asr.listener_words), so both read "OK", "Mhm" and "(coughs)" alike; and
how a phrase said again and again is found (``longest_run``: the word guard's loops, the beam's repeats).
"""

from __future__ import annotations

import re

_NON_SPEECH = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*")  # whisper's "[coughing]", "(knocking)"
_WORD = re.compile(r"[a-z0-9']+")
# Spellings whisper gives one word in: "OK" and "okay"; a hum of m and h ("Mm.", "Mhm", "Mm-hmm.", "Hmm")
# is how it writes "mm-hmm", in whichever voice (none of these is a word that asks for anything).
_SPELLINGS = {"okay": "ok", "yea": "yeah", "yeh": "yeah"}
_HUM = re.compile(r"^(?=[mh]*m)[mh]+$")
HUM = "mmhmm"
LONGEST_PHRASE = 4  # the longest phrase longest_run looks for said again and again


def spoken_words(text: str) -> list[str]:
    """Lower-case words of a transcript, without whisper's sound annotations."""
    return _WORD.findall(_NON_SPEECH.sub(" ", text.lower()))


def word_keys(text: str) -> list[str]:
    """The words of ``text`` as phrase lists are matched: no apostrophe, one spelling per word, and a hum
    one word however whisper splits it ("Mm-hmm" is one, as "Mhm" is)."""
    keys: list[str] = []
    for word in spoken_words(text):
        word = word.replace("'", "")
        key = HUM if _HUM.match(word) else _SPELLINGS.get(word, word)
        if key != HUM or not keys or keys[-1] != HUM:
            keys.append(key)
    return keys


def phrase_key(phrase: str) -> str:
    """A phrase of a list as one run of letters ("I see" is "isee", "uh-huh" is "uhhuh")."""
    return "".join(word_keys(phrase))


def longest_run(words: list[str]) -> tuple[int, int]:
    """(phrase length, times in a row) of the most repeated run of one phrase of 1-4 words in ``words``."""
    worst = (1, 1 if words else 0)
    for size in range(1, LONGEST_PHRASE + 1):
        for start in range(len(words) - size + 1):
            phrase, times = words[start : start + size], 1
            while words[start + times * size : start + (times + 1) * size] == phrase:
                times += 1
            if times > 1 and times * size > worst[0] * worst[1]:
                worst = (size, times)
    return worst
