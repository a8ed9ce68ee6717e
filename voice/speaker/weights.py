"""The voice encoder's weights read from Resemblyzer's ``pretrained.pt`` without torch.

The file is a legacy (pre-zip) ``torch.save``: five pickles in a row (magic number, protocol version, system
info, the checkpoint, the storage keys) followed by each storage's raw bytes, an int64 element count first.
A restricted unpickler rebuilds each tensor as a numpy view of its storage; it resolves no other global, so
the file can run no code.
"""

from __future__ import annotations

import pickle
import struct
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from voice.errors import ModelError
from voice.models import distribution_file

DISTRIBUTION = "Resemblyzer"
PINNED = "Resemblyzer==0.1.4"
_MODEL_FILE = "resemblyzer/pretrained.pt"
_MAGIC = 0x1950A86A20F9469CFC6C  # torch's legacy serialization magic number
_PROTOCOL = 1001
_STORAGE_DTYPES = {"FloatStorage": np.dtype("<f4")}  # the checkpoint holds float32 tensors only
LAYERS = 3
HIDDEN = 256
MELS = 40
EMBEDDING = 256

Tensor = npt.NDArray[np.float32]  # a float32 array: weights, mel frames, embeddings


def bundled_weights_path(distribution: str = DISTRIBUTION) -> Path:
    """``pretrained.pt`` inside the Resemblyzer wheel (installed with --no-deps: only the file is needed)."""
    missing = f"the speaker model is missing: pip install --no-deps '{PINNED}' ({_MODEL_FILE})"
    return distribution_file(distribution, _MODEL_FILE, missing)


@dataclass(frozen=True)
class LstmLayer:
    """One LSTM layer in PyTorch's layout: gate rows in the order input, forget, cell (g), output."""

    weight_ih: Tensor  # (4 * HIDDEN, inputs)
    weight_hh: Tensor  # (4 * HIDDEN, HIDDEN)
    bias: Tensor  # bias_ih + bias_hh, (4 * HIDDEN,)


@dataclass(frozen=True)
class EncoderWeights:
    """The GE2E voice encoder: 3 LSTM layers over 40 mel channels, then a linear layer to the embedding."""

    layers: tuple[LstmLayer, ...]
    linear_weight: Tensor  # (EMBEDDING, HIDDEN)
    linear_bias: Tensor  # (EMBEDDING,)


def load_encoder_weights(path: Path | None = None) -> EncoderWeights:
    """The encoder's weights from ``path`` (default: the Resemblyzer wheel's); ModelError if unreadable."""
    path = path or bundled_weights_path()
    state = read_legacy_torch_state(path)
    try:
        layers = tuple(
            LstmLayer(
                _shaped(state, f"lstm.weight_ih_l{n}", (4 * HIDDEN, MELS if n == 0 else HIDDEN)),
                _shaped(state, f"lstm.weight_hh_l{n}", (4 * HIDDEN, HIDDEN)),
                _shaped(state, f"lstm.bias_ih_l{n}", (4 * HIDDEN,))
                + _shaped(state, f"lstm.bias_hh_l{n}", (4 * HIDDEN,)),
            )
            for n in range(LAYERS)
        )
        return EncoderWeights(
            layers,
            _shaped(state, "linear.weight", (EMBEDDING, HIDDEN)),
            _shaped(state, "linear.bias", (EMBEDDING,)),
        )
    except KeyError as exc:
        raise ModelError(f"{path} is not the GE2E voice encoder: it has no {exc.args[0]}") from exc


def read_legacy_torch_state(path: Path) -> dict[str, Tensor]:
    """The ``model_state`` tensors of a legacy ``torch.save`` checkpoint, as float32 arrays by name."""
    try:
        with path.open("rb") as file:
            return _read(file)
    except OSError as exc:
        raise ModelError(f"cannot read the speaker model {path}: {exc.strerror}") from exc
    except (pickle.UnpicklingError, EOFError, ValueError, struct.error) as exc:
        raise ModelError(f"{path} is not a readable legacy torch checkpoint: {exc}") from exc


def _read(file: BinaryIO) -> dict[str, Tensor]:
    if _RestrictedUnpickler(file).load() != _MAGIC:
        raise ValueError("no torch magic number (a zip checkpoint or another file)")
    if _RestrictedUnpickler(file).load() != _PROTOCOL:
        raise ValueError("an unknown torch protocol version")
    _RestrictedUnpickler(file).load()  # system info: byte order and type sizes, little-endian here
    checkpoint_reader = _RestrictedUnpickler(file)
    checkpoint = checkpoint_reader.load()
    keys = _RestrictedUnpickler(file).load()
    storages: dict[str, np.ndarray[Any, np.dtype[Any]]] = {}
    for key in keys:
        dtype, numel = checkpoint_reader.storage_types[key]
        (count,) = struct.unpack("<q", file.read(8))
        if count != numel:
            raise ValueError(f"storage {key} holds {count} elements, its header says {numel}")
        data = file.read(count * dtype.itemsize)
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"storage {key} is cut short")
        storages[key] = np.frombuffer(data, dtype=dtype)
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("model_state"), dict):
        raise ValueError("no model_state in the checkpoint")
    return {name: view.rebuild(storages) for name, view in checkpoint["model_state"].items()}


@dataclass(frozen=True)
class _StorageRef:
    key: str


@dataclass(frozen=True)
class _TensorView:
    """What ``torch._utils._rebuild_tensor_v2`` would make: a strided view of one storage."""

    storage: _StorageRef
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]

    def rebuild(self, storages: dict[str, np.ndarray[Any, np.dtype[Any]]]) -> Tensor:
        flat = storages[self.storage.key]
        itemsize = flat.dtype.itemsize
        last = self.offset + sum((n - 1) * s for n, s in zip(self.size, self.stride, strict=True))
        if self.offset < 0 or (all(self.size) and last >= len(flat)):
            raise ValueError(f"a tensor reaches past the end of storage {self.storage.key}")
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset :], shape=self.size, strides=tuple(s * itemsize for s in self.stride)
        )
        return np.array(view, dtype=np.float32)  # a copy: the storage bytes are shared between tensors


def _rebuild_tensor_v2(
    storage: _StorageRef, offset: int, size: tuple[int, ...], stride: tuple[int, ...], *_: object
) -> _TensorView:
    return _TensorView(storage, offset, tuple(size), tuple(stride))


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves only the globals a state dict of float tensors needs; anything else is refused."""

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(file)
        self.storage_types: dict[str, tuple[np.dtype[Any], int]] = {}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(
            f"the checkpoint names {module}.{name}, which a weights file has no need of"
        )

    def persistent_load(self, pid: Any) -> Any:
        # ('storage', type, key, location, numel[, view metadata]): the legacy format's storage reference
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"an unknown persistent id {pid!r}")
        storage_type, key, _location, numel = pid[1:5]
        if not isinstance(storage_type, _StorageType) or not isinstance(numel, int):
            raise pickle.UnpicklingError(f"an unknown storage {pid!r}")
        self.storage_types[str(key)] = (_STORAGE_DTYPES[storage_type.name], numel)
        return _StorageRef(str(key))


def _shaped(state: dict[str, Tensor], name: str, shape: tuple[int, ...]) -> Tensor:
    array = state[name]
    if array.shape != shape:
        raise ModelError(f"the speaker model's {name} is shaped {array.shape}, expected {shape}")
    return np.ascontiguousarray(array, dtype=np.float32)
