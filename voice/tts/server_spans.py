"""Word spans for a remote voice, which gives no phoneme alignments: estimated, per sentence if it can."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.tts.chunker import ends_sentence
from voice.tts.estimate import estimate_spans
from voice.tts.port import Synthesis, WordTiming
from voice.tts.speakable import speakable


def spoken_text(text: str) -> str:
    """What to send a server to speak: ``text`` with its markup silenced ("" if nothing is left)."""
    return " ".join(said for said in (speakable(word) for word in text.split()) if said)


def estimated_synthesis(text: str, segments: Sequence[Samples]) -> Synthesis:
    """The audio of ``segments`` (at ENGINE_RATE) with estimated spans for the words of ``text``.

    A server that streams one audio segment per sentence tells where each sentence sits: when its
    segments match the text's sentences one to one, each sentence's words are spread over its own
    segment, so an estimate's error cannot spill past a sentence end. Otherwise over the whole audio.
    """
    words = text.split()
    said = [speakable(word) for word in words]
    audio = np.concatenate([np.zeros(0, dtype=np.float32), *segments]).astype(np.float32)
    groups = _sentences(said)
    spans: list[tuple[int, int]] = []
    if len(segments) > 1 and len(groups) == len(segments):
        offset = 0
        for group, segment in zip(groups, segments, strict=True):
            spans += [(offset + s, offset + e) for s, e in estimate_spans(group, segment)]
            offset += segment.size
    elif audio.size:
        spans = estimate_spans(said, audio)
    else:
        spans = [(0, 0)] * len(words)
    timings = tuple(WordTiming(word, start, end) for word, (start, end) in zip(words, spans, strict=True))
    return Synthesis(AudioBlock(audio, ENGINE_RATE), timings, estimated=True)


def _sentences(words: Sequence[str]) -> list[list[str]]:
    """The words in sentences, as a server's sentence splitter would roughly cut them."""
    groups: list[list[str]] = [[]]
    for word in words:
        groups[-1].append(word)
        if ends_sentence(word):
            groups.append([])
    return [group for group in groups if group]
