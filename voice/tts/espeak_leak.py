"""piper-tts 1.8's espeak bridge leaks on every phonemized text; these wrappers stop both leaks.

- ``espeakbridge.get_phonemes`` appends each (phonemes, terminator, end of sentence) tuple to the list it
  returns without releasing its own reference, so every clause piper ever phonemized stays in memory (a
  tuple and its phoneme string, about 220 bytes). A probe measures that extra reference against a tuple
  built in Python; only a bridge found keeping exactly one is wrapped, so a fixed piper is left as it is.
- piper sets espeak's voice before every text it phonemizes, and each ``espeak_SetVoiceByName`` leaves
  about 1.3 KB of native memory behind (espeak-ng's DoVoiceChange, found with memray). The voice is only
  set again when it changes.

Word spans phonemize each word of a reply on its own, so a story of 190 words left about 300 KB behind.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from types import ModuleType

Clauses = list[tuple[str, str, bool]]

_py_decref = ctypes.pythonapi.Py_DecRef
_py_decref.argtypes = [ctypes.py_object]
_py_decref.restype = None


def stop_espeak_leaks(bridge: ModuleType) -> None:
    """Both wrappers on piper's ``espeakbridge``; espeak must be initialized and given a voice first
    (piper does that on its first synthesis)."""
    set_voice_only_when_it_changes(bridge)
    release_leaked_clauses(bridge)


def set_voice_only_when_it_changes(bridge: ModuleType) -> None:
    """Wrap ``bridge.set_voice`` so that setting the voice already set does nothing (until espeak is
    initialized again)."""
    set_voice: Callable[[str], None] = bridge.set_voice
    initialize: Callable[[str], None] = bridge.initialize
    if getattr(set_voice, "skips_repeats", False):
        return
    current: list[str] = []

    def set_voice_if_new(voice: str) -> None:
        if current != [voice]:
            set_voice(voice)
            current[:] = [voice]

    def initialize_afresh(data_dir: str) -> None:
        current.clear()
        initialize(data_dir)

    set_voice_if_new.skips_repeats = True  # type: ignore[attr-defined]
    bridge.set_voice = set_voice_if_new  # type: ignore[attr-defined]
    bridge.initialize = initialize_afresh  # type: ignore[attr-defined]


def release_leaked_clauses(bridge: ModuleType) -> bool:
    """Wrap ``bridge.get_phonemes`` if it keeps a reference to each clause it returns; True if it does."""
    leaky: Callable[[str], Clauses] = bridge.get_phonemes
    if getattr(leaky, "releases_clauses", False):
        return True
    clauses = leaky("a")
    if not clauses:
        return False
    control = [tuple([clauses[0][0], clauses[0][1], clauses[0][2]])]
    if sys.getrefcount(clauses[0]) - sys.getrefcount(control[0]) != 1:
        return False
    for clause in clauses:
        _py_decref(clause)

    def get_phonemes(text: str) -> Clauses:
        found = leaky(text)
        for clause in found:
            _py_decref(clause)  # the list's reference is the one left
        return found

    get_phonemes.releases_clauses = True  # type: ignore[attr-defined]
    bridge.get_phonemes = get_phonemes  # type: ignore[attr-defined]
    return True
