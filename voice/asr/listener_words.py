"""A second look at a few words heard over a reply: were they a listener's "mm-hmm"?

tiny.en, hearing a short sound with nothing before it, writes it as a word it knows: "Mm-hmm." as
"momentum." or "My turn.", "Uh-huh." as "Uh uh.", "Sure." as "short", "Yeah." as "you know". Over a
reply each of these cut the story. Given listener words and short cut-ins as text said before
(``LISTENER_PROMPT``), it hears the same audio as said. So a transcript over a reply of one to
``WORDS_AT_MOST`` words that are not a listener's already, nor a lone hesitation ("Uh."), nor a question
or a word that takes the turn by itself ("No.", "Why?", "Stop.", "Uh-uh."), is decoded again with that
prompt, and the second decode is taken only if it is all listener words.

Measured on the tuning voices (26: piper and espeak-ng en-us, en-gb, en-029 and en-gb-x-gbclan), 13
listener words and runs and 20 short cut-ins each, heard alone at the lull look: listener words heard as
something else 71 of 338 -> 19; cut-ins heard as a listener's 18 of 520 -> 24 (where the first decode was
no word either: "purp" for "Huh?", "C" for "Hey."). The prompt holds cut-in words too: with listener
words alone, whisper wrote "Okay." for "Hey." and "Oh." for "No." more often; with the cut-in words and
only some listener words, it missed more of the others ("Got it." as "plotted.", "Oh." as "So...": 25 of
338 left). An empty first decode or a lone hesitation gets no such look: there the prompt made listener
words out of "Pardon?", "Huh?" and "Hey.".

It gets a look of its own (issue 45: "Pardon?" heard as nothing let the reply resume as over a cough):
decoded again with short cut-ins only (``CUT_IN_PROMPT``), taken only if that hears nothing but those
words, loops not, and is surer on average than ``CUT_IN_LOGPROB_ABOVE``. On the tuning voices, 69 of 520
cut-ins were heard as nothing or a hesitation and 25 of them come back as their words; of 62 coughs,
knocks, clicks and sox breaths heard as nothing, the prompt made "What?", "Huh?" or "Hey." of many, all
at -1.2 or less, where the cut-ins heard were at -0.8 or more (most of the rest are "Uh-uh." heard as
"Uh..." and loops: "Sorry? Sorry? ..."); no listener word became a cut-in.

The words are the default backchannels', read as the engine reads them (voice.asr.transcript_words); the
engine still judges the text with the lists in effect. Pure text rules here; the decoding is the backend's.
"""

from __future__ import annotations

import re

from voice.asr.transcript_words import phrase_key, word_keys

# Cut-in words, then every default listener word not yet named: whisper hears what it was told more often
LISTENER_PROMPT = "Yeah. Mm-hmm. No. Stop. Wait. Uh-huh. Okay. What? Got it. I see. Sure. Right. Wow. Oh."
WORDS_AT_MOST = 3  # a listener's run is short; longer words over a reply are a cut-in however heard
# A listener's acknowledgements; also the engine's default backchannels (voice.engine.overlap)
LISTENER_PHRASES = (
    "yeah",
    "yes",
    "okay",
    "uh-huh",
    "mm-hmm",
    "right",
    "I see",
    "sure",
    "got it",
    "wow",
    "oh",
)

# Short cut-ins only: with listener words beside them whisper made listener words of "Pardon?" and "Huh?"
CUT_IN_PROMPT = "What? Sorry? Pardon? Really? Hey. Huh? No. Why? Wait. Stop."
CUT_IN_LOGPROB_ABOVE = -0.8  # tuning: cut-ins heard at -0.78 and above, noises made words at -1.2 and below
_CUT_IN_WORDS = frozenset(word_keys(CUT_IN_PROMPT))

_LISTENER_RUN = re.compile("^(?:" + "|".join(phrase_key(phrase) for phrase in LISTENER_PHRASES) + ")+$")
_HESITATIONS = frozenset({"uh", "um", "ah", "er", "eh", "hm"})
# Words heard right that take the turn or stop the reply by themselves: prompted, whisper made "Why?" and
# "Next." into "Right." and "Uh-uh." into "Uh-huh.".
_TURN_WORDS = frozenset(
    {"no", "nope", "not", "why", "what", "huh", "pardon", "sorry", "hey", "next"}
    | {"stop", "wait", "hold", "quiet", "enough", "mind", "shut"}  # the default stop phrases' words
)
_UH_UH = re.compile(r"\buh-uh\b", re.IGNORECASE)  # whisper's spelling of a "no"; "Uh uh." may be "uh-huh"


def is_listeners(text: str) -> bool:
    """All of ``text`` is listener words ("Mm-hmm.", "Right, right.", "Okay, yeah.")."""
    return bool(_LISTENER_RUN.match("".join(word_keys(text))))


def worth_a_second_look(text: str) -> bool:
    """A few words, not a listener's already, that a listener's sound may have been heard as."""
    words = word_keys(text)
    said = len(text.split())  # as written: whisper's spelled-out stammer "D-d-d-d." is one word, not four
    if not words or said > WORDS_AT_MOST or is_listeners(text) or text.rstrip().endswith("?"):
        return False
    if _UH_UH.search(text) or _TURN_WORDS.intersection(words):
        return False
    return not heard_as_nothing(text)


def heard_as_nothing(text: str) -> bool:
    """No words, or a lone hesitation ("Uh."): what a short cut-in, or a cough, may be heard as."""
    words = word_keys(text)
    return not words or (len(words) == 1 and words[0] in _HESITATIONS)


def is_cut_in_words(text: str) -> bool:
    """All of ``text`` is the short cut-ins' words (``CUT_IN_PROMPT``: "Pardon?", "Really? Really?")."""
    words = word_keys(text)
    return bool(words) and _CUT_IN_WORDS.issuperset(words)
