"""One root exception for everything `voice` raises on purpose, with branches by cause.

Third-party errors (httpx, websockets, sounddevice, onnxruntime, ...) are translated into these at the
boundary with ``raise ... from exc`` so callers never need to know which library failed.
"""


class VoiceError(Exception):
    """Root of every error `voice` raises on purpose; its message is one line a user can act on."""


class ConfigError(VoiceError):
    """A setting, flag, scenario or file given by the user is unusable."""


class AudioError(VoiceError):
    """Audio data or an audio device cannot be used."""


class DeviceError(AudioError):
    """A sound device is missing, vanished or refused the stream."""


class ModelError(VoiceError):
    """A model (ASR, TTS, LLM weights) is missing, corrupt or failed to run."""


class SessionLogError(VoiceError):
    """A session log cannot be read or written."""


class ProtocolError(VoiceError):
    """An event arrived that the current state does not allow (a bug in a driver, not user input)."""
