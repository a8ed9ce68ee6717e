"""Every key the config file may hold: what it accepts, its default, and the variable and flag over it.

One table, so the file's checks, the layering, ``voice config show`` and the template never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from voice.asr.transcript_words import phrase_key
from voice.config.kiosk import AUDIO_MODES, KEEP
from voice.config.llm import ENV_CONTEXT_TOKENS, ENV_GGUF, ENV_MODEL, ENV_URL
from voice.config.telemetry import OTLP_ENDPOINT_ENV
from voice.engine.hold import EAGERNESS
from voice.engine.overlap import DEFAULT_BACKCHANNELS, DEFAULT_STOP_PHRASES, correcting_word
from voice.engine.speaker_check import SPEAKERS
from voice.errors import ConfigError
from voice.speech_backends import Role, check_server_url, server_forms
from voice.wake.models import check_wake_word

ValueCheck = Callable[[Any], Any]
ENV_ASR_URL = "VOICE_ASR_URL"
ENV_TTS_URL = "VOICE_TTS_URL"
ENV_SPEECH_API_KEY = "VOICE_SPEECH_API_KEY"
YEAR_S = 365 * 86400  # longer is a mistake (and keeps inf out)


class BadValue(ValueError):
    """A value a key cannot take; the message ends a sentence that starts with where it came from."""


@dataclass(frozen=True)
class Key:
    """One setting: ``check`` returns the value to use or raises BadValue."""

    name: str  # section.key, as in the file
    check: ValueCheck
    default: Any
    help: str  # one line for the template
    example: Any = None  # shown in the template when there is no default
    env: str | None = None
    flag: str | None = None  # the flag as typed
    dest: str | None = None  # its argparse attribute
    from_text: Callable[[str], Any] = str.strip  # how text from the environment or a flag reads
    is_path: Callable[[str], bool] = lambda value: False  # a relative one in a file is beside the file

    @property
    def section(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def field(self) -> str:
        return self.name.split(".", 1)[1]


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else f'"{value}"'


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadValue(f"must be non-empty text, not {_show(value)}")
    return value.strip()


def http_url(value: Any) -> str:
    url = text(value)
    if not url.startswith(("http://", "https://")):
        raise BadValue(f"must be an http:// or https:// URL, not {_show(value)}")
    return url


def speech_server(role: Role) -> ValueCheck:
    """A speech server's URL that some backend of ``role`` in the table of speech backends takes."""

    def check(value: Any) -> str:
        url = text(value)
        try:
            check_server_url(role, url)
        except ConfigError as exc:
            raise BadValue(f"is not a usable server URL: {exc}") from exc
        return url

    return check


def whole(low: int, high: int) -> ValueCheck:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BadValue(f"must be a whole number from {low} to {high}, not {_show(value)}")
        return value

    return check


def whole_text(text: str) -> int | str:
    """Digits as a number; anything else stays text, for the check to refuse by name."""
    return int(text) if text.strip().isdigit() else text.strip()


def always(value: str) -> bool:
    """Every value of this key is a path."""
    return True


def slashed(value: str) -> bool:
    """A path has a slash or names an ``.onnx`` file; anything else is a models.txt name or a size."""
    return "/" in value or value.endswith(".onnx")


def wake_word(value: Any) -> str:
    try:
        return check_wake_word(text(value))
    except ConfigError as exc:
        raise BadValue(f"must name a wake word: {exc}") from exc


def model_file(value: str) -> bool:
    """A wake word with a slash or a ``.json`` names a model's file; anything else a bundled model."""
    return "/" in value or value.endswith((".json", ".tflite"))


def seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= YEAR_S:
        raise BadValue(f"must be a number of seconds above 0 (at most {YEAR_S}), not {_show(value)}")
    return float(value)


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise BadValue(f"must be true or false, not {_show(value)}")
    return value


def one_of(*choices: str) -> ValueCheck:
    def check(value: Any) -> str:
        if value not in choices:
            raise BadValue(f"must be one of {', '.join(choices)}, not {_show(value)}")
        return str(value)

    return check


def texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadValue(f"must be a list of non-empty texts, not {_show(value)}")
    return tuple(v.strip() for v in value)


def phrases(value: Any) -> tuple[str, ...]:
    """A list of phrases matched on whole transcripts: each must hold a word (letters or digits)."""
    listed = texts(value)
    empty = [phrase for phrase in listed if not phrase_key(phrase)]
    if empty:
        raise BadValue(f"must list phrases with words in them, not {_show(empty[0])}")
    return listed


def listener_phrases(value: Any) -> tuple[str, ...]:
    """Phrases a listener says to go along: none may disagree or correct ("no" is never a "yeah")."""
    listed = phrases(value)
    for phrase in listed:
        word = correcting_word(phrase)
        if word is not None:
            raise BadValue(
                f"must not hold {phrase!r}: {word!r} disagrees or corrects, so it is never a backchannel"
            )
    return listed


PHRASE_LISTS = ("turn.backchannels", "turn.stop_phrases")  # only the file sets them: it checks them apart


def in_both_lists(backchannels: tuple[str, ...], stop_phrases: tuple[str, ...]) -> str | None:
    """A stop phrase that is also a backchannel (which would "okay" be?), or None."""
    keys = {phrase_key(phrase) for phrase in backchannels}
    return next((phrase for phrase in stop_phrases if phrase_key(phrase) in keys), None)


def device(value: Any) -> int | str:
    """A device index (a number, or digits on the command line) or a name from `voice devices`."""
    if isinstance(value, bool) or not isinstance(value, int | str) or (isinstance(value, int) and value < 0):
        raise BadValue(f"must be a device name or index from `voice devices`, not {_show(value)}")
    if isinstance(value, str):
        name = text(value)
        return int(name) if name.isdigit() else name
    return value


KEYS = (
    Key(
        "llm.url", http_url, None, "an OpenAI-compatible server's base URL; unset: the embedded llama.cpp",
        "http://127.0.0.1:8080/v1", ENV_URL, "--llm-url", "llm_url",
    ),
    Key(
        "llm.model", text, None, "the model name that server knows (needed with url)", "local", ENV_MODEL,
        "--llm-model", "llm_model",
    ),
    Key(
        "llm.gguf", text, None, "a GGUF file for the embedded server (instead of url)", "~/models/model.gguf",
        ENV_GGUF, "--llm-gguf", "llm_gguf", is_path=always,
    ),
    Key(
        "llm.context_tokens", whole(1, 10_000_000), None,
        "the model's context window in tokens: a remote server's limit or the embedded server's size", 8192,
        ENV_CONTEXT_TOKENS, "--context-tokens", "context_tokens", whole_text,
    ),
    Key(
        "audio.input_device", device, None,
        "microphone: an index or name from `voice devices`; unset: the system one",
        "pulse", flag="--input-device", dest="input_device",
    ),
    Key(
        "audio.output_device", device, None,
        "speaker: an index or name from `voice devices`; unset: the system one",
        "pulse", flag="--output-device", dest="output_device",
    ),
    Key(
        "audio.echo_cancel", boolean, True, "cancel the speaker's echo in the mic (false for a headset)",
        flag="--echo-cancel", dest="echo_cancel",
    ),
    Key(
        "asr.model", text, None,
        "whisper: a models.txt name (whisper-base, once pulled), a size or a model folder; unset: tiny.en",
        "whisper-base", flag="--asr-model", dest="asr_model", is_path=slashed,
    ),
    Key(
        "asr.context", boolean, False,
        "give whisper the assistant's last heard sentence when it asked something (\"Pick a card.\"): "
        "answers to it were heard better in the voices it was tuned on, worse in others (README, Hearing)",
    ),
    Key(
        "tts.voice", text, None,
        "piper: a models.txt name or a .onnx file with its .onnx.json beside it; unset: en_US-joe-medium",
        "piper-en_US-lessac-medium", flag="--tts-voice", dest="tts_voice", is_path=slashed,
    ),
    Key(
        "turn.eagerness", one_of(*EAGERNESS), "auto",
        "when to answer a turn that sounds finished at a short pause: high at once, low after the long "
        "silence, auto after a hold that adapts to the speaker",
        flag="--eagerness", dest="eagerness",
    ),
    Key(
        "turn.speaker", one_of(*SPEAKERS), "anyone",
        "whose voice takes turns: conversation = only the voice that started the conversation (a television "
        "or a side conversation neither cuts a reply nor is answered; a second real user is not heard until "
        "the conversation ends), anyone = every voice",
    ),
    Key(
        "turn.backchannels", listener_phrases, DEFAULT_BACKCHANNELS,
        "a listener's words that, said alone over a reply (not after a question), let it go on unasked; "
        "one wrongly here makes a real answer go unheard",
    ),
    Key(
        "turn.stop_phrases", phrases, DEFAULT_STOP_PHRASES,
        "words that, said alone over a reply, cut it and ask nothing until the user speaks again",
    ),
    Key(
        "asr.url", speech_server("asr"), None,
        f"a speech-to-text server to use instead of whisper here: {server_forms('asr')}",
        "wyoming://127.0.0.1:10300", ENV_ASR_URL, "--asr", "asr_url",
    ),
    Key(
        "tts.url", speech_server("tts"), None,
        f"a text-to-speech server to use instead of piper here: {server_forms('tts')}",
        "wyoming://127.0.0.1:10200", ENV_TTS_URL, "--tts", "tts_url",
    ),
    Key(
        "kiosk.host", text, "127.0.0.1",
        "the address `voice kiosk` listens on (beyond loopback: VOICE_TOKEN)",
        flag="--host", dest="host",
    ),
    Key(
        "kiosk.port", whole(0, 65535), 8765, "port for the page and the API (0: any free port)",
        flag="--port", dest="port",
    ),
    Key(
        "kiosk.audio", one_of(*AUDIO_MODES), "device",
        "device: this machine's mic and speaker; none: typed input only; websocket: the page's (Talk button)",
        flag="--audio", dest="audio",
    ),
    Key(
        "kiosk.allow_origins", texts, (),
        "other web origins whose pages may connect (the page's own always may); the flag repeats",
        ["https://screen.example"], flag="--allow-origin", dest="allow_origin",
    ),
    Key(
        "kiosk.fresh_after_s", seconds, 120.0, "after this much quiet the next visitor starts afresh",
        flag="--fresh-after", dest="fresh_after",
    ),
    Key(
        "kiosk.wake", text, None,
        "sleep until whisper hears this phrase (costly: every sound is transcribed; wake.word is cheap)",
        "hey kiosk", flag="--wake", dest="wake",
    ),
    Key(
        "wake.word", wake_word, None,
        "sleep until this wake word: a bundled model (`voice models`), a model's .json; unset: always awake",
        "okay_nabu", flag="--wake-word", dest="wake_word", is_path=model_file,
    ),
    Key(
        "wake.awake_s", seconds, 10.0, "with a wake word: after this much quiet it sleeps again",
        flag="--awake-for", dest="awake_for",
    ),
    Key(
        "kiosk.sessions", text, None, "the kiosk's session log folder; unset: ~/.local/state/voice/kiosk",
        "~/kiosk-sessions", flag="--sessions", dest="sessions", is_path=always,
    ),
    Key(
        "kiosk.keep_sessions", whole(1, 1_000_000), KEEP, "session logs kept; the oldest go first",
        flag="--keep-sessions", dest="keep_sessions",
    ),
    # telemetry (README "Running a fleet"): nothing leaves the machine unless asked for
    Key(
        "telemetry.otlp_endpoint", http_url, None,
        "an OpenTelemetry collector (OTLP/HTTP base URL): each turn is traced to it; unset: no traces",
        "http://collector:4318", OTLP_ENDPOINT_ENV,
    ),
    Key(
        "telemetry.include_text", boolean, False,
        "spans carry what the user said and heard (false: no user text in traces)",
    ),
    Key(
        "telemetry.metrics_port", whole(1, 65535), None,
        "`voice chat` serves Prometheus /metrics and /healthz on 127.0.0.1 at this port (a kiosk: its own)",
        9465, flag="--metrics-port", dest="metrics_port", from_text=whole_text,
    ),
)  # fmt: skip

BY_NAME = {key.name: key for key in KEYS}
SECTIONS = tuple(dict.fromkeys(key.section for key in KEYS))

# Secrets live in the environment only, so a config file can be shared or committed.
SECRETS = {
    "llm.api_key": "VOICE_LLM_API_KEY",
    "llm.headers": "VOICE_LLM_HEADERS",
    "speech.api_key": ENV_SPEECH_API_KEY,
    "kiosk.token": "VOICE_TOKEN",
}
