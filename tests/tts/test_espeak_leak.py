"""Speaking for hours does not keep every phonemized clause: piper's espeak bridge leak is undone."""

from __future__ import annotations

import ctypes
import gc
import sys
from types import ModuleType

import pytest

from voice.tts.espeak_leak import Clauses, release_leaked_clauses
from voice.tts.piper_voice import PiperSynthesizer

_py_incref = ctypes.pythonapi.Py_IncRef
_py_incref.argtypes = [ctypes.py_object]
_py_incref.restype = None


def bridge(leaks: bool) -> ModuleType:
    """A stand-in espeak bridge whose get_phonemes keeps a reference to each clause, as piper 1.8's does."""
    module = ModuleType("bridge")

    def get_phonemes(text: str) -> Clauses:
        clauses = [("".join(["p", word]), ".", True) for word in text.split()]
        if leaks:
            for clause in clauses:
                _py_incref(clause)
        return clauses

    module.get_phonemes = get_phonemes  # type: ignore[attr-defined]
    return module


def blocks_kept(bridge: ModuleType, calls: int) -> int:
    gc.collect()
    before = sys.getallocatedblocks()
    for index in range(calls):
        bridge.get_phonemes(f"word{index} and more words here")
    gc.collect()
    return sys.getallocatedblocks() - before


def test_a_leaking_bridge_is_wrapped_and_then_keeps_nothing() -> None:
    leaking = bridge(leaks=True)
    assert blocks_kept(leaking, 1000) > 4000  # the stand-in leaks as piper does

    assert release_leaked_clauses(leaking)
    assert release_leaked_clauses(leaking)  # once is enough: a second call does not wrap it again

    assert blocks_kept(leaking, 1000) < 50
    assert leaking.get_phonemes("what time is it") == [
        (f"p{w}", ".", True) for w in ["what", "time", "is", "it"]
    ]


def test_a_bridge_that_does_not_leak_is_left_alone() -> None:
    sound = bridge(leaks=False)
    original = sound.get_phonemes

    assert not release_leaked_clauses(sound)

    assert sound.get_phonemes is original
    assert blocks_kept(sound, 1000) < 50


@pytest.mark.models
def test_speaking_replies_over_and_over_keeps_no_python_objects(synthesizer: PiperSynthesizer) -> None:
    text = "Once upon a time, an old grey fox lived alone on a snowy hill above a quiet valley."
    for _ in range(30):  # onnxruntime settles in over the first calls
        synthesizer.synthesize(text)
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(100):
        synthesizer.synthesize(text)
    gc.collect()

    assert (
        sys.getallocatedblocks() - before < 1000
    )  # piper 1.8 alone keeps about 3,600: 2 per word and clause
