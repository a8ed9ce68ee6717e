"""One embedding of a stretch of speech: Resemblyzer's ``embed_utterance`` without torch.

The stretch is preprocessed (raised to -30 dBFS, long silences cut), cut into 1.6 s partial utterances at
1.3 a second, each run through the network in one batch, and the partial embeddings averaged and L2-normed.
Two embeddings of one voice have a cosine similarity near 1; the embeddings are non-negative, so two
voices rarely fall below 0.5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from voice.audio.block import AudioBlock, Samples
from voice.errors import AudioError
from voice.speaker.features import (
    HOP,
    PARTIAL_FRAMES,
    RATE,
    mel_frames,
    partial_slices,
    raise_volume,
    trim_long_silences,
)
from voice.speaker.network import EncoderNetwork, NumpyNetwork, OnnxNetwork
from voice.speaker.weights import Tensor, load_encoder_weights

NetworkKind = Literal["onnx", "numpy"]
MIN_VOICED_S = 0.3  # less voice than this after trimming gives no embedding: too little to say whose


class SpeakerEncoder:
    """The GE2E voice encoder, loaded once; ``embed`` is safe to call from one thread at a time.

    ``network`` picks onnxruntime (the default: 6-14 ms a partial on one core) or numpy (14-20 ms, and
    slower still if BLAS spreads over cores other work needs). ``pad_short`` is Resemblyzer's way with
    audio shorter than one partial: zeros after it up to 1.6 s; False runs the network on its own frames
    alone (the encoder never saw padding in training; benchmarks/speaker_embedding.py measures both).
    """

    def __init__(
        self, weights: Path | None = None, network: NetworkKind = "onnx", pad_short: bool = True
    ) -> None:
        loaded = load_encoder_weights(weights)
        self.network: EncoderNetwork = OnnxNetwork(loaded) if network == "onnx" else NumpyNetwork(loaded)
        self.pad_short = pad_short

    def embed(self, samples: Samples, preprocess: bool = True) -> Tensor | None:
        """The embedding (256,) of 16 kHz mono ``samples``; None when too little voice is in them."""
        audio = np.asarray(samples, dtype=np.float32)
        if preprocess:
            audio = trim_long_silences(raise_volume(audio))
        if len(audio) < MIN_VOICED_S * RATE:
            return None
        partials = self.partials(audio)
        mean = partials.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        return np.asarray(mean / norm, dtype=np.float32) if norm > 0 else None

    def embed_block(self, block: AudioBlock) -> Tensor | None:
        """``embed`` for an engine block; AudioError unless it is 16 kHz mono."""
        if block.rate != RATE or block.channels != 1:
            got = f"{block.channels} ch at {block.rate} Hz"
            raise AudioError(f"the speaker embedding needs mono {RATE} Hz audio, got {got}")
        return self.embed(block.samples)

    def partials(self, audio: Samples) -> Tensor:
        """The embeddings (partials, 256) of the 1.6 s partial utterances of preprocessed ``audio``."""
        if not self.pad_short and len(audio) < PARTIAL_FRAMES * HOP:
            return self.network(mel_frames(audio)[np.newaxis, :-1])  # the last frame is mostly padding
        slices = partial_slices(len(audio))
        end = slices[-1].stop * HOP
        padded = np.pad(audio, (0, max(0, end - len(audio))))
        mels = mel_frames(padded)
        batch = np.stack([mels[s] for s in slices])
        return self.network(batch)


def cosine(a: Tensor, b: Tensor) -> float:
    """Cosine similarity of two embeddings (1: the same direction)."""
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / denominator if denominator > 0 else 0.0
