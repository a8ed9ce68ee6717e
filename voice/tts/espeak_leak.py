"""piper-tts 1.8's espeak bridge keeps every clause it phonemizes; this drops the reference it keeps.

``espeakbridge.get_phonemes`` appends each (phonemes, terminator, end of sentence) tuple to the list it
returns without releasing its own reference, so every clause piper ever phonemized stays in memory (a
tuple and its phoneme string, about 220 bytes; word spans phonemize each word of a reply on its own,
so a story of 190 words leaves 40 KB behind). A probe measures that extra reference against a tuple
built in Python; only a bridge found keeping exactly one is wrapped, so a fixed piper is left as it is.
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


def release_leaked_clauses(bridge: ModuleType) -> bool:
    """Wrap ``bridge.get_phonemes`` if it keeps a reference to each clause it returns; True if it does.

    espeak must be initialized and given a voice first (piper does that on its first synthesis).
    """
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
