"""Which speech recogniser and voice to use: local models or speech servers, as the settings say."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SpeechChoice:
    """Which whisper and piper to load, or which speech servers to use instead.

    ``asr_model`` is a models.txt name ("whisper-base"), a whisper size name or a model directory (None: the
    bundled tiny.en); ``tts_voice`` a models.txt name or a piper ``.onnx`` with its ``.onnx.json`` beside it
    (None: the bundled en_US-joe-medium). ``asr_url`` and ``tts_url`` name speech servers used instead
    (voice.remote.speech), with ``api_key`` for them.
    """

    asr_model: str | None = None
    tts_voice: str | None = None
    asr_url: str | None = None
    tts_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
