"""A QDQ-quantized ONNX model as a float32 graph, rewritten once at load.

Smart Turn's file has int8 weights and a uint8 QuantizeLinear/DequantizeLinear pair on every activation.
As shipped, onnxruntime fuses the pairs into int8 kernels chosen by the CPU's instruction sets, and
without VNNI they saturate: the weather question cut before its last word reads 0.97 complete on AVX2,
0.35 on a VNNI Xeon. Unfused (``session.disable_quant_qdq``), each activation is still rounded to 256
levels, so a last-bit difference in the float kernels or the features can move a level: features
changed by one part in a million moved that question between 0.21 and 0.60. Here each weight is
dequantized to float32 as DequantizeLinear defines it and each activation pair is dropped: the graph
is continuous, and CPUs whose arithmetic differs in the last bit judge alike to about 1e-6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def float32_graph(path: Path) -> bytes:
    """The serialized model at ``path`` with its weights in float32 and no activation quantization."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    weights = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    quantized = {node.output[0]: node.input[0] for node in graph.node if node.op_type == "QuantizeLinear"}
    dequantized: list[Any] = []
    renamed: dict[str, str] = {}
    kept = []
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in weights:
            dequantized.append(numpy_helper.from_array(_dequantize(node, weights), node.output[0]))
        elif node.op_type == "DequantizeLinear" and node.input[0] in quantized:
            renamed[node.output[0]] = quantized[node.input[0]]
        elif node.op_type != "QuantizeLinear":
            kept.append(node)
    for node in kept:
        node.input[:] = [renamed.get(name, name) for name in node.input]
    used = {name for node in kept for name in node.input}
    initializers = [tensor for tensor in graph.initializer if tensor.name in used] + dequantized
    del graph.node[:]
    graph.node.extend(kept)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    serialized: bytes = model.SerializeToString()
    return serialized


def _dequantize(node: Any, weights: dict[str, np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    """DequantizeLinear of a weight: (x - zero_point) * scale, per tensor or along ``axis`` (default 1)."""
    values = weights[node.input[0]].astype(np.float32)
    scale = weights[node.input[1]].astype(np.float32)
    zero = weights[node.input[2]].astype(np.float32) if len(node.input) > 2 and node.input[2] else 0.0
    if scale.ndim == 1 and values.ndim > 1:
        axis = next((attribute.i for attribute in node.attribute if attribute.name == "axis"), 1)
        shape = [1] * values.ndim
        shape[axis] = -1
        scale = scale.reshape(shape)
        zero = np.reshape(zero, shape) if isinstance(zero, np.ndarray) else zero
    return np.asarray((values - zero) * scale, dtype=np.float32)
