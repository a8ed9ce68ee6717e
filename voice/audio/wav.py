"""WAV files in and out: read any common WAV as mono float32 on the engine clock, write 16-bit PCM mono.

Reading parses the RIFF chunks with numpy because Python's ``wave`` module rejects float and
WAVE_FORMAT_EXTENSIBLE files, which many tools (sox, DAWs, browsers) write by default.
"""

from __future__ import annotations

import os
import struct
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.resample import resample
from voice.errors import AudioError

_PCM = 0x0001
_IEEE_FLOAT = 0x0003
_EXTENSIBLE = 0xFFFE
# WAVE_FORMAT_EXTENSIBLE sub-formats are GUIDs whose first two bytes hold the plain format tag.
_SUBFORMAT_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"

StrPath = str | os.PathLike[str]


@dataclass(frozen=True)
class _Format:
    tag: int
    channels: int
    rate: int
    block_align: int
    bits: int


def read_wav(path: StrPath, rate: int | None = ENGINE_RATE) -> AudioBlock:
    """Read a WAV file as a mono float32 block at sample 0, resampled to ``rate`` (None: the file's rate)."""
    raw = _read_bytes(path)
    fmt, data = _parse_riff(raw, path)
    frames = _decode(fmt, data, path)
    mono = frames[:, 0] if fmt.channels == 1 else frames.mean(axis=1, dtype=np.float32)
    mono = np.ascontiguousarray(mono, dtype=np.float32)
    if rate is None or rate == fmt.rate:
        return AudioBlock(mono, fmt.rate)
    if mono.size == 0:
        return AudioBlock(mono, rate)
    return AudioBlock(resample(mono, fmt.rate, rate), rate)


def write_wav(path: StrPath, block: AudioBlock) -> None:
    """Write a mono block as 16-bit PCM at its own rate; samples beyond [-1, 1] are clipped, NaN becomes 0."""
    if block.channels != 1:
        raise AudioError(f"{path}: write_wav writes mono audio, got {block.channels} channels")
    write_pcm16(path, block.samples, block.rate)


def write_pcm16(
    path: StrPath, samples: npt.NDArray[np.floating[Any]], rate: int, *, full_scale: float = 32768.0
) -> None:
    """Write mono samples of any float precision as 16-bit PCM, 1.0 scaled to ``full_scale``.

    The fixture maker writes its float64 speech at a full scale of 32767, as the fixtures always were.
    """
    clean = np.nan_to_num(samples.astype(np.float64), nan=0.0, posinf=1.0, neginf=-1.0)
    pcm = np.clip(np.round(clean * full_scale), -32768, 32767).astype("<i2")
    try:
        with open(path, "wb") as file, wave.open(file, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(rate)
            out.writeframes(pcm.tobytes())
    except OSError as exc:
        raise AudioError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def _read_bytes(path: StrPath) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise AudioError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise AudioError(f"{path}: is a directory, not a WAV file") from exc
    except OSError as exc:
        raise AudioError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _parse_riff(raw: bytes, path: StrPath) -> tuple[_Format, bytes]:
    if len(raw) < 12 or raw[0:4] not in (b"RIFF", b"RIFX") or raw[8:12] != b"WAVE":
        raise AudioError(f"{path}: not a WAV file (no RIFF/WAVE header)")
    if raw[0:4] == b"RIFX":
        raise AudioError(f"{path}: unsupported WAV: big-endian (RIFX) files are not supported")
    fmt: _Format | None = None
    offset = 12
    while offset + 8 <= len(raw):
        chunk_id = raw[offset : offset + 4]
        (size,) = struct.unpack_from("<I", raw, offset + 4)
        body_start = offset + 8
        body = raw[body_start : body_start + size]
        if chunk_id == b"fmt ":
            fmt = _parse_fmt(body, path)
        elif chunk_id == b"data":
            if fmt is None:
                raise AudioError(f"{path}: malformed WAV: data chunk comes before the fmt chunk")
            if len(body) < size:
                raise AudioError(
                    f"{path}: truncated WAV: data chunk declares {size} bytes but {len(body)} remain"
                )
            return fmt, body
        offset = body_start + size + (size & 1)  # chunks are padded to an even length
    if fmt is None:
        raise AudioError(f"{path}: truncated or malformed WAV: no fmt chunk")
    raise AudioError(f"{path}: truncated or malformed WAV: no data chunk")


def _parse_fmt(body: bytes, path: StrPath) -> _Format:
    if len(body) < 16:
        raise AudioError(f"{path}: malformed WAV: fmt chunk is {len(body)} bytes, needs at least 16")
    tag, channels, rate, _byte_rate, block_align, bits = struct.unpack_from("<HHIIHH", body)
    if tag == _EXTENSIBLE:
        if len(body) < 40:
            raise AudioError(f"{path}: malformed WAV: WAVE_FORMAT_EXTENSIBLE fmt chunk is too short")
        subformat = body[24:40]
        if subformat[2:] != _SUBFORMAT_GUID_TAIL:
            raise AudioError(f"{path}: unsupported WAV: extensible sub-format {subformat.hex()}")
        (tag,) = struct.unpack_from("<H", subformat)
    if channels == 0 or rate == 0:
        raise AudioError(f"{path}: malformed WAV: {channels} channels at {rate} Hz")
    if (tag, bits) not in {
        (_PCM, 8),
        (_PCM, 16),
        (_PCM, 24),
        (_PCM, 32),
        (_IEEE_FLOAT, 32),
        (_IEEE_FLOAT, 64),
    }:
        kind = {_PCM: "integer PCM", _IEEE_FLOAT: "float"}.get(tag, f"format tag 0x{tag:04x}")
        raise AudioError(f"{path}: unsupported WAV format: {bits}-bit {kind}")
    if block_align != channels * bits // 8:
        raise AudioError(f"{path}: malformed WAV: block align {block_align} for {channels} x {bits}-bit")
    return _Format(tag, channels, rate, block_align, bits)


def _decode(fmt: _Format, data: bytes, path: StrPath) -> Samples:
    """Decode the data chunk into float32 shaped (frames, channels)."""
    if len(data) % fmt.block_align:
        raise AudioError(f"{path}: truncated WAV: data ends in the middle of a frame")
    if fmt.tag == _IEEE_FLOAT:
        values = np.frombuffer(data, dtype="<f4" if fmt.bits == 32 else "<f8")
        values = np.clip(np.nan_to_num(values, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
        samples = values.astype(np.float32)
    elif fmt.bits == 8:
        samples = (np.frombuffer(data, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif fmt.bits == 24:
        triples = np.frombuffer(data, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        # The high byte carries the sign: reinterpret it as int8 before shifting into place.
        high = triples[:, 2].astype(np.uint8).view(np.int8).astype(np.int32)
        samples = (triples[:, 0] | (triples[:, 1] << 8) | (high << 16)).astype(np.float32) / 8_388_608.0
    else:
        dtype = "<i2" if fmt.bits == 16 else "<i4"
        samples = (np.frombuffer(data, dtype=dtype).astype(np.float64) / 2.0 ** (fmt.bits - 1)).astype(
            np.float32
        )
    return np.asarray(samples, dtype=np.float32).reshape(-1, fmt.channels)
