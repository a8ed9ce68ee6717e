"""WAV reading of every common form, resampling, writing, and one-line errors for unusable files."""

from __future__ import annotations

import struct
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.errors import AudioError

PCM, FLOAT, EXTENSIBLE = 1, 3, 0xFFFE
LEFT = np.array([-1.0, -0.5, -0.25, 0.0, 0.125, 0.5, 0.75, 0.99], dtype=np.float64)
RIGHT = LEFT[::-1].copy()


def encode(values: np.ndarray, tag: int, bits: int) -> bytes:
    if tag == FLOAT:
        return values.astype("<f4" if bits == 32 else "<f8").tobytes()
    if bits == 8:
        return np.clip(np.round(values * 128 + 128), 0, 255).astype(np.uint8).tobytes()
    full = 2 ** (bits - 1)
    ints = np.clip(np.round(values * full), -full, full - 1).astype(np.int64)
    if bits == 24:
        return b"".join(int(v).to_bytes(3, "little", signed=True) for v in ints)
    return ints.astype("<i2" if bits == 16 else "<i4").tobytes()


def tolerance(tag: int, bits: int) -> float:
    """One step of the integer format, or float32 precision."""
    return max(2.0 ** -(bits - 1) if tag == PCM else 0.0, 1e-6)


def fmt_chunk(tag: int, channels: int, rate: int, bits: int, extensible: bool) -> bytes:
    align = channels * bits // 8
    head = struct.pack(
        "<HHIIHH", EXTENSIBLE if extensible else tag, channels, rate, rate * align, align, bits
    )
    if extensible:
        guid = struct.pack("<H", tag) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        head += struct.pack("<HHI", 22, bits, 0) + guid
    return b"fmt " + struct.pack("<I", len(head)) + head


def riff(*chunks: bytes) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def data_chunk(data: bytes) -> bytes:
    return b"data" + struct.pack("<I", len(data)) + data + b"\x00" * (len(data) & 1)


FORMS = [
    pytest.param(PCM, 8, False, id="8-bit"),
    pytest.param(PCM, 16, False, id="16-bit"),
    pytest.param(PCM, 24, False, id="24-bit"),
    pytest.param(PCM, 32, False, id="32-bit"),
    pytest.param(FLOAT, 32, False, id="float32"),
    pytest.param(FLOAT, 64, False, id="float64"),
    pytest.param(PCM, 16, True, id="extensible-16-bit"),
    pytest.param(PCM, 24, True, id="extensible-24-bit"),
    pytest.param(PCM, 32, True, id="extensible-32-bit"),
    pytest.param(FLOAT, 32, True, id="extensible-float32"),
]


@pytest.mark.parametrize(("tag", "bits", "extensible"), FORMS)
def test_mono_file_of_every_form_reads_as_its_values(
    tmp_path: Path, tag: int, bits: int, extensible: bool
) -> None:
    path = tmp_path / "mono.wav"
    path.write_bytes(riff(fmt_chunk(tag, 1, 8000, bits, extensible), data_chunk(encode(LEFT, tag, bits))))

    block = read_wav(path, rate=None)

    assert (block.rate, block.start, block.channels, block.samples.dtype) == (8000, 0, 1, np.float32)
    np.testing.assert_allclose(block.samples, LEFT, atol=tolerance(tag, bits))


@pytest.mark.parametrize(("tag", "bits", "extensible"), FORMS)
def test_stereo_file_of_every_form_is_downmixed(
    tmp_path: Path, tag: int, bits: int, extensible: bool
) -> None:
    interleaved = np.column_stack((LEFT, RIGHT)).reshape(-1)
    path = tmp_path / "stereo.wav"
    path.write_bytes(
        riff(fmt_chunk(tag, 2, 8000, bits, extensible), data_chunk(encode(interleaved, tag, bits)))
    )

    block = read_wav(path, rate=None)

    assert block.channels == 1
    np.testing.assert_allclose(block.samples, (LEFT + RIGHT) / 2, atol=tolerance(tag, bits))


def test_chunks_before_data_with_odd_length_are_skipped(tmp_path: Path) -> None:
    odd_list = b"LIST" + struct.pack("<I", 5) + b"INFOx\x00"  # 5 bytes + 1 pad byte
    path = tmp_path / "tagged.wav"
    path.write_bytes(riff(fmt_chunk(PCM, 1, 8000, 16, False), odd_list, data_chunk(encode(LEFT, PCM, 16))))

    np.testing.assert_allclose(read_wav(path, rate=None).samples, LEFT, atol=1 / 32768)


@pytest.mark.parametrize(
    ("bits", "encoding"), [(16, "signed-integer"), (24, "signed-integer"), (32, "floating-point")]
)
def test_sox_stereo_44k_file_is_resampled_to_the_engine_rate(
    tmp_path: Path, bits: int, encoding: str
) -> None:
    path = tmp_path / "tone.wav"
    file_format = ["-r", "44100", "-c", "2", "-b", str(bits), "-e", encoding]
    subprocess.run(
        ["sox", "-n", *file_format, str(path), "synth", "1", "sine", "440", "vol", "0.5"], check=True
    )

    native = read_wav(path, rate=None)
    engine = read_wav(path)

    assert (native.rate, native.frames) == (44100, 44100)
    assert (engine.rate, engine.frames) == (ENGINE_RATE, ENGINE_RATE)
    spectrum = np.abs(np.fft.rfft(engine.samples))
    assert np.argmax(spectrum) * ENGINE_RATE / engine.frames == pytest.approx(440, abs=2)
    assert float(np.max(np.abs(engine.samples[1000:-1000]))) == pytest.approx(0.5, abs=0.01)


def test_written_file_is_16_bit_mono_pcm_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "out.wav"
    samples = np.sin(np.linspace(0, 60, 4000)).astype(np.float32) * 0.8

    write_wav(path, AudioBlock(samples, 22050, start=500))

    with wave.open(str(path), "rb") as check:
        assert (check.getnchannels(), check.getsampwidth(), check.getframerate()) == (1, 2, 22050)
    back = read_wav(path, rate=None)
    assert back.rate == 22050
    np.testing.assert_allclose(back.samples, samples, atol=1 / 32767)


def test_writing_clips_out_of_range_samples_and_silences_nan(tmp_path: Path) -> None:
    path = tmp_path / "loud.wav"
    write_wav(path, AudioBlock(np.array([1.7, -3.0, np.nan, 0.5], dtype=np.float32), 16000))

    np.testing.assert_allclose(read_wav(path).samples, [32767 / 32768, -1.0, 0.0, 0.5], atol=1 / 32768)


def test_writing_stereo_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match="mono"):
        write_wav(tmp_path / "x.wav", AudioBlock(np.zeros((10, 2), dtype=np.float32), 16000))


def test_writing_into_a_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "x.wav"
    with pytest.raises(AudioError) as caught:
        write_wav(target, AudioBlock(np.zeros(10, dtype=np.float32), 16000))
    assert str(target) in str(caught.value)
    assert "\n" not in str(caught.value)


def _unusable_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = riff(fmt_chunk(PCM, 1, 8000, 16, False), data_chunk(encode(LEFT, PCM, 16)))
    cases = {
        "text": (b"hello, I am not audio\n", "not a WAV"),
        "truncated": (good[:-5], "truncated"),
        "header only": (good[:40], "truncated"),
        "no data": (riff(fmt_chunk(PCM, 1, 8000, 16, False)), "no data chunk"),
        "12-bit": (riff(fmt_chunk(PCM, 1, 8000, 12, False), data_chunk(b"\x00" * 8)), "unsupported"),
        "mu-law": (riff(fmt_chunk(7, 1, 8000, 8, False), data_chunk(b"\x00" * 8)), "unsupported"),
        "big-endian": (b"RIFX" + good[4:], "unsupported"),
    }
    found: dict[str, tuple[Path, str]] = {}
    for name, (content, problem) in cases.items():
        path = tmp_path / f"{name}.wav"
        path.write_bytes(content)
        found[name] = (path, problem)
    found["missing"] = (tmp_path / "missing.wav", "no such file")
    found["directory"] = (tmp_path, "directory")
    return found


UNUSABLE = [
    "text",
    "truncated",
    "header only",
    "no data",
    "12-bit",
    "mu-law",
    "big-endian",
    "missing",
    "directory",
]


@pytest.mark.parametrize("case", UNUSABLE)
def test_unusable_file_is_a_one_line_error_naming_file_and_problem(tmp_path: Path, case: str) -> None:
    path, problem = _unusable_files(tmp_path)[case]

    with pytest.raises(AudioError) as caught:
        read_wav(path)

    message = str(caught.value)
    assert str(path) in message
    assert problem in message
    assert "\n" not in message
