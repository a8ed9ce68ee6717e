"""Speaking for hours keeps neither the phonemized clauses nor a copy of the voice per text: piper's espeak
bridge leaks are undone."""

from __future__ import annotations

import ctypes
import gc
import sys
from types import ModuleType

import pytest

from voice.tts.espeak_leak import Clauses, release_leaked_clauses, set_voice_only_when_it_changes
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
    module.voices_set = []  # type: ignore[attr-defined]
    module.set_voice = module.voices_set.append  # type: ignore[attr-defined]
    module.initialize = lambda data_dir: module.voices_set.append(f"initialized {data_dir}")  # type: ignore[attr-defined]
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


def test_the_voice_is_set_again_only_when_it_changes() -> None:
    stand_in = bridge(leaks=False)
    set_voice_only_when_it_changes(stand_in)
    set_voice_only_when_it_changes(stand_in)  # wrapped once

    for voice in ["en-us"] * 100 + ["de"] + ["en-us"] * 3:
        stand_in.set_voice(voice)
    stand_in.initialize("data")  # espeak starts afresh, with no voice
    stand_in.set_voice("en-us")

    assert stand_in.voices_set == ["en-us", "de", "en-us", "initialized data", "en-us"]


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")
    ]  # fmt: skip


def malloc_in_use() -> int:
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    return int(libc.mallinfo2().uordblks)


@pytest.mark.models
def test_speaking_replies_over_and_over_keeps_no_memory(synthesizer: PiperSynthesizer) -> None:
    text = "Once upon a time, an old grey fox lived alone on a snowy hill above a quiet valley."
    for _ in range(20):  # onnxruntime settles in over the first calls
        synthesizer.synthesize(text)
    gc.collect()
    blocks, in_use = sys.getallocatedblocks(), malloc_in_use()
    for _ in range(50):
        synthesizer.synthesize(text)
    gc.collect()
    kept_blocks, kept_bytes = sys.getallocatedblocks() - blocks, malloc_in_use() - in_use

    assert kept_blocks < 600, kept_blocks  # piper 1.8 alone keeps about 2,000: 2 per word and clause
    assert kept_bytes < 300_000, kept_bytes  # and espeak about 1.3 MB: 1.3 KB each time its voice is set
