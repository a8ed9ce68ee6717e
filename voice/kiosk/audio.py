"""Where the kiosk's sound comes from and goes to (``--audio``): the one place an audio mode plugs in.

Each mode gives the speech models, the echo canceller and the stream openers a DeviceConversation
runs on. ``device`` is the machine's mic and speaker, as `voice chat` uses them; ``none`` is silent
(typed input, replies heard at a reading pace); ``websocket`` is the talking page's mic and speaker,
which the server feeds (``browser``).
"""

from __future__ import annotations

from dataclasses import dataclass

from voice.audio.echo import EchoCanceller
from voice.chat.driver import DeviceSettings, OpenInput, OpenOutput, default_echo_canceller
from voice.components import SpeechModels, load_speech_models, telling_voices_apart
from voice.config.kiosk import AUDIO_MODES
from voice.errors import ConfigError
from voice.kiosk.browser_audio import BrowserAudio
from voice.kiosk.silent import NoMicrophone, ReadingPace, silent_openers
from voice.speech_backends import SpeechChoice


@dataclass(frozen=True)
class AudioSetup:
    """What DeviceConversation needs for one mode; no openers means the real devices ``devices`` names."""

    mode: str
    models: SpeechModels
    echo_canceller: EchoCanceller | None
    devices: DeviceSettings
    open_input: OpenInput | None = None
    open_output: OpenOutput | None = None
    browser: BrowserAudio | None = None  # --audio websocket: where the server hands the page's audio


def check_mode(mode: str) -> None:
    """Refuse an unknown mode before anything is loaded."""
    if mode not in AUDIO_MODES:
        raise ConfigError(f"unknown --audio {mode!r} (one of {', '.join(AUDIO_MODES)})")


def audio_setup(
    mode: str,
    devices: DeviceSettings,
    echo_cancel: bool = True,
    speech: SpeechChoice | None = None,
    speaker: str = "anyone",
) -> AudioSetup:
    """Load what ``mode`` needs (whisper and piper or their servers, as load_speech_models takes them, and
    the speaker encoder for ``speaker`` "conversation", for real sound only)."""
    check_mode(mode)
    if mode == "none":
        open_input, open_output = silent_openers(devices.block_ms)
        models = SpeechModels(NoMicrophone(), ReadingPace())
        return AudioSetup(mode, models, None, devices, open_input, open_output)
    canceller = default_echo_canceller() if echo_cancel else None
    models = telling_voices_apart(load_speech_models(speech), speaker)
    if mode == "websocket":
        browser = BrowserAudio(block_ms=devices.block_ms)
        return AudioSetup(mode, models, canceller, devices, browser.open_input, browser.open_output, browser)
    return AudioSetup(mode, models, canceller, devices)
