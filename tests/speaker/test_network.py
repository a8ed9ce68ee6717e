"""Both ways of running the encoder compute PyTorch's LSTM, as a step-by-step reference here has it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from voice.speaker.network import NumpyNetwork, OnnxNetwork
from voice.speaker.weights import bundled_weights_path, load_encoder_weights, read_legacy_torch_state

Array = np.ndarray[Any, np.dtype[Any]]


def reference_embeddings(state: dict[str, Array], mels: Array) -> Array:
    """PyTorch's nn.LSTM equations, one frame and one layer at a time, in float64, from the raw state dict.

    i = sig(W_ii x + b_ii + W_hi h + b_hi), f = sig(W_if x + ...), g = tanh(W_ig x + ...),
    o = sig(W_io x + ...),
    c' = f c + i g, h' = o tanh(c'); rows of weight_ih / weight_hh are the gates in the order i, f, g, o.
    """

    def sigma(x: Array) -> Array:
        return np.asarray(np.exp(-np.logaddexp(0.0, -x)))  # 1 / (1 + e^-x) without overflow

    out = []
    for utterance in mels.astype(np.float64):
        h = [np.zeros(256) for _ in range(3)]
        c = [np.zeros(256) for _ in range(3)]
        for frame in utterance:
            x = frame
            for n in range(3):
                w_ih = state[f"lstm.weight_ih_l{n}"].astype(np.float64)
                w_hh = state[f"lstm.weight_hh_l{n}"].astype(np.float64)
                b_ih = state[f"lstm.bias_ih_l{n}"].astype(np.float64)
                b_hh = state[f"lstm.bias_hh_l{n}"].astype(np.float64)
                rows = {gate: slice(k * 256, (k + 1) * 256) for k, gate in enumerate("ifgo")}
                pre = {gate: w_ih[r] @ x + b_ih[r] + w_hh[r] @ h[n] + b_hh[r] for gate, r in rows.items()}
                i, f, g, o = sigma(pre["i"]), sigma(pre["f"]), np.tanh(pre["g"]), sigma(pre["o"])
                c[n] = f * c[n] + i * g
                h[n] = o * np.tanh(c[n])
                x = h[n]
        raw = np.maximum(state["linear.weight"].astype(np.float64) @ h[2] + state["linear.bias"], 0.0)
        out.append(raw / np.linalg.norm(raw))
    return np.array(out)


@pytest.fixture(scope="module")
def state() -> dict[str, Array]:
    return read_legacy_torch_state(bundled_weights_path())


def mel_like(rng: np.random.Generator, batch: int, frames: int) -> Array:
    """Random frames spread like mel power: non-negative, mostly small, now and then large."""
    return (rng.exponential(1.0, (batch, frames, 40)) ** 3 * 0.5).astype(np.float32)


@pytest.mark.models
@pytest.mark.parametrize("kind", ["numpy", "onnx"])
def test_the_network_matches_the_step_by_step_reference(kind: str, state: dict[str, Array]) -> None:
    weights = load_encoder_weights()
    network = NumpyNetwork(weights) if kind == "numpy" else OnnxNetwork(weights)
    rng = np.random.default_rng(47)
    mels = mel_like(rng, 3, 50)
    got = network(mels)
    expected = reference_embeddings(state, mels)
    assert got.shape == (3, 256)
    np.testing.assert_allclose(got, expected, atol=2e-5)
    # three different inputs, three different voices: the comparison is not of constants
    assert float(expected[0] @ expected[1]) < 0.999


@pytest.mark.models
def test_numpy_and_onnx_agree_on_whole_partials() -> None:
    weights = load_encoder_weights()
    mels = mel_like(np.random.default_rng(3), 2, 160)
    np.testing.assert_allclose(NumpyNetwork(weights)(mels), OnnxNetwork(weights)(mels), atol=1e-5)
