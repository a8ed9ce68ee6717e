"""The GE2E encoder's network run on mel frames, two ways: numpy, and an ONNX graph in onnxruntime.

Both compute what Resemblyzer's ``VoiceEncoder.forward`` does: a 3-layer LSTM over (batch, frames, 40),
the last layer's final hidden state through the linear layer, ReLU, then L2 norm. The test holds both to a
step-by-step reference of PyTorch's LSTM equations.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Protocol

import numpy as np

from voice.errors import ModelError
from voice.models import onnx_session
from voice.speaker.weights import HIDDEN, MELS, EncoderWeights, Tensor


class EncoderNetwork(Protocol):
    """Mel frames (batch, frames, 40) in, one L2-normed embedding (batch, 256) per row out."""

    def __call__(self, mels: Tensor) -> Tensor: ...


def _sigmoid(x: Tensor) -> Tensor:
    return np.asarray(0.5 + 0.5 * np.tanh(0.5 * x), dtype=np.float32)  # no overflow for large -x


def _normed(raw: Tensor) -> Tensor:
    embedding = np.maximum(raw, 0.0)
    norms = np.linalg.norm(embedding, axis=1, keepdims=True)
    return np.asarray(embedding / np.maximum(norms, 1e-12), dtype=np.float32)  # all-zero stays zero


class NumpyNetwork:
    """The network in numpy: each layer's input projection for all frames at once, then the recurrence."""

    def __init__(self, weights: EncoderWeights) -> None:
        self._layers = [
            (np.ascontiguousarray(layer.weight_ih.T), np.ascontiguousarray(layer.weight_hh.T), layer.bias)
            for layer in weights.layers
        ]
        self._linear = (np.ascontiguousarray(weights.linear_weight.T), weights.linear_bias)

    def __call__(self, mels: Tensor) -> Tensor:
        batch, frames, _ = mels.shape
        sequence = np.asarray(mels, dtype=np.float32)
        hidden = np.zeros((batch, HIDDEN), dtype=np.float32)
        for weight_ih, weight_hh, bias in self._layers:
            # (frames, batch, 4 * HIDDEN): each step reads one contiguous block
            projected = np.ascontiguousarray((sequence @ weight_ih + bias).transpose(1, 0, 2))
            hidden = np.zeros((batch, HIDDEN), dtype=np.float32)
            cell = np.zeros((batch, HIDDEN), dtype=np.float32)
            outputs = np.empty((batch, frames, HIDDEN), dtype=np.float32)
            for t in range(frames):
                gates = projected[t] + hidden @ weight_hh
                # PyTorch's gate order: input, forget, cell candidate (g), output
                i = _sigmoid(gates[:, :HIDDEN])
                f = _sigmoid(gates[:, HIDDEN : 2 * HIDDEN])
                g = np.tanh(gates[:, 2 * HIDDEN : 3 * HIDDEN])
                o = _sigmoid(gates[:, 3 * HIDDEN :])
                cell = f * cell + i * g
                hidden = o * np.tanh(cell)
                outputs[:, t] = hidden
            sequence = outputs
        weight, bias = self._linear
        return _normed(hidden @ weight + bias)


class OnnxNetwork:
    """The same network as one ONNX graph (three LSTM operators) run by onnxruntime on one thread."""

    def __init__(self, weights: EncoderWeights) -> None:
        with tempfile.TemporaryDirectory(prefix="voice-speaker-") as scratch:
            path = Path(scratch) / "ge2e_encoder.onnx"  # built from the weights, read once, not kept
            path.write_bytes(encoder_graph(weights))
            self._session = onnx_session(path, "speaker embedding")

    def __call__(self, mels: Tensor) -> Tensor:
        try:
            (embedding,) = self._session.run(None, {"mels": np.asarray(mels, dtype=np.float32)})
        except Exception as exc:  # onnxruntime raises its own unrelated error types
            raise ModelError(f"the speaker embedding failed: {exc}") from exc
        return np.asarray(embedding, dtype=np.float32)


def encoder_graph(weights: EncoderWeights) -> bytes:
    """The network as a serialized ONNX model: input ``mels`` (batch, frames, 40), output ``embedding``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    # ONNX orders an LSTM's gates input, output, forget, cell; PyTorch input, forget, cell, output
    order = np.concatenate([np.arange(HIDDEN) + block * HIDDEN for block in (0, 3, 1, 2)])
    initializers = []
    nodes = [helper.make_node("Transpose", ["mels"], ["x0"], perm=[1, 0, 2])]  # (frames, batch, 40)
    for n, layer in enumerate(weights.layers):
        bias = np.concatenate([layer.bias[order], np.zeros(4 * HIDDEN, dtype=np.float32)])
        for name, value in (
            (f"w{n}", layer.weight_ih[order][np.newaxis]),
            (f"r{n}", layer.weight_hh[order][np.newaxis]),
            (f"b{n}", bias[np.newaxis]),
        ):
            initializers.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=np.float32), name))
        nodes.append(
            helper.make_node(
                "LSTM", [f"x{n}", f"w{n}", f"r{n}", f"b{n}"], [f"y{n}", f"h{n}"], hidden_size=HIDDEN
            )
        )
        nodes.append(helper.make_node("Squeeze", [f"y{n}", "axis1"], [f"x{n + 1}"]))
    last = len(weights.layers) - 1
    initializers += [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0"),
        numpy_helper.from_array(weights.linear_weight, "linear_w"),
        numpy_helper.from_array(weights.linear_bias, "linear_b"),
    ]
    nodes += [
        helper.make_node("Squeeze", [f"h{last}", "axis0"], ["final"]),  # (batch, HIDDEN)
        helper.make_node("Gemm", ["final", "linear_w", "linear_b"], ["raw"], transB=1),
        helper.make_node("Relu", ["raw"], ["positive"]),
        helper.make_node("LpNormalization", ["positive"], ["embedding"], axis=1, p=2),
    ]
    graph = helper.make_graph(
        nodes,
        "ge2e_voice_encoder",
        [helper.make_tensor_value_info("mels", TensorProto.FLOAT, ["batch", "frames", MELS])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime of any recent release reads
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())
