"""The one table of speech backends: every recogniser and voice voice can use, here or on a server.

A new one is its module (a Transcriber or Synthesizer, and a function that opens it) and one entry in
``TRANSCRIBERS`` or ``SYNTHESIZERS``. The config's checks and help, the flags, `voice models`, `voice say`,
`voice transcribe` and the components all read this table, so nothing else learns of it.

A setting names a backend by its form: a server URL by its scheme (``wyoming://HOST:PORT``,
``http(s)://HOST/v1``), a local model as ``NAME:MODEL`` for the local backend NAME, or a bare model
(or nothing) for the role's first local backend (whisper, piper).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, cast, runtime_checkable

from voice.asr.openai_asr import open_openai_transcriber
from voice.asr.port import Transcriber
from voice.asr.whisper import prepare_whisper
from voice.asr.wyoming_asr import open_wyoming_transcriber
from voice.errors import ConfigError
from voice.remote.limits import Limits
from voice.remote.urls import ServerUrl, api_base, host_and_port, split_server_url
from voice.tts.openai_tts import open_openai_synthesizer
from voice.tts.piper_voice import prepare_piper
from voice.tts.port import Synthesizer
from voice.tts.wyoming_tts import open_wyoming_synthesizer

Role = Literal["asr", "tts"]
OptionCheck = Callable[[str], str]  # returns the option's value or raises ValueError saying why not
Part = TypeVar("Part", Transcriber, Synthesizer)


@runtime_checkable
class Closing(Protocol):
    """What a server backend adds to its port: connections to close, also at the end of a ``with``."""

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc_info: object) -> None: ...


class ServerTranscriber(Transcriber, Closing, Protocol): ...


class ServerSynthesizer(Synthesizer, Closing, Protocol): ...


def any_text(value: str) -> str:
    return value


def sample_rate(value: str) -> str:
    if not (value.isdigit() and 0 < int(value) <= 192_000):
        raise ValueError(f"must be a sample rate in Hz, got {value!r}")
    return value


@dataclass(frozen=True)
class SpeechBackend(Generic[Part]):
    """One recogniser or voice: how a setting names it and how it is opened.

    A local backend has ``prepare``: it finds the model now (a missing one fails before anything loads) and
    loads it when the returned function is called; ``tuning`` names the settings fields a command may set
    (whisper's ``beam_size``), ``models_role`` the models.txt role it loads. A server backend has ``open``,
    the URL ``schemes`` it takes, its ``form`` and ``shape`` (checked before anything connects) and the
    ``options`` its URL's query may give.
    """

    name: str
    role: Role
    summary: str
    prepare: Callable[[str | None, Mapping[str, Any]], Callable[[], Part]] | None = None
    tuning: frozenset[str] = frozenset()
    models_role: str | None = None
    open: Callable[[ServerUrl, str | None, Limits], Part] | None = None
    schemes: tuple[str, ...] = ()
    form: str = ""
    shape: Callable[[ServerUrl, str], None] = host_and_port
    options: Mapping[str, OptionCheck] = field(default_factory=dict)

    @property
    def local(self) -> bool:
        return self.prepare is not None


TRANSCRIBERS: tuple[SpeechBackend[Transcriber], ...] = (
    SpeechBackend(
        "whisper", "asr", "faster-whisper on this machine", prepare=prepare_whisper,
        tuning=frozenset({"beam_size", "language"}), models_role="asr",
    ),
    SpeechBackend(
        "wyoming", "asr", "a Wyoming speech-to-text server (wyoming-faster-whisper)",
        open=open_wyoming_transcriber, schemes=("wyoming",), form="wyoming://HOST:PORT",
        options={"model": any_text, "language": any_text},
    ),
    SpeechBackend(
        "openai", "asr", "an OpenAI-compatible /audio/transcriptions (speaches, faster-whisper-server)",
        open=open_openai_transcriber, schemes=("http", "https"), form="http(s)://HOST/v1", shape=api_base,
        options={"model": any_text, "language": any_text},
    ),
)  # fmt: skip

SYNTHESIZERS: tuple[SpeechBackend[Synthesizer], ...] = (
    SpeechBackend(
        "piper", "tts", "piper on this machine, with phoneme alignments", prepare=prepare_piper,
        tuning=frozenset({"length_scale"}), models_role="tts",
    ),
    SpeechBackend(
        "wyoming", "tts", "a Wyoming text-to-speech server (wyoming-piper)",
        open=open_wyoming_synthesizer, schemes=("wyoming",), form="wyoming://HOST:PORT",
        options={"voice": any_text},
    ),
    SpeechBackend(
        "openai", "tts", "an OpenAI-compatible /audio/speech (Kokoro-FastAPI, speaches, local-tts-studio)",
        open=open_openai_synthesizer, schemes=("http", "https"), form="http(s)://HOST/v1", shape=api_base,
        options={"model": any_text, "voice": any_text, "rate": sample_rate},
    ),
)  # fmt: skip

BACKENDS: tuple[SpeechBackend[Any], ...] = (*TRANSCRIBERS, *SYNTHESIZERS)


@dataclass(frozen=True)
class SpeechChoice:
    """Which recogniser and voice to use, as the settings name them.

    ``asr_model`` and ``tts_voice`` name local models (None: the bundled tiny.en and en_US-joe-medium; see
    the module's docstring for ``NAME:MODEL``); ``asr_url`` and ``tts_url`` name speech servers used instead,
    with ``api_key`` for them. ``asr_context``: the recogniser hears the assistant's last question as context.
    ``asr_greedy``: a local whisper chooses a question's words greedily, not with its beam (eagerness
    ``high``, where the answer goes as soon as the words are in: voice.asr.short_window).
    """

    asr_model: str | None = None
    tts_voice: str | None = None
    asr_url: str | None = None
    tts_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    asr_context: bool = False
    asr_greedy: bool = False


def server_forms(role: Role) -> str:
    """How a server URL for ``role`` may look, for help and messages."""
    forms = list(dict.fromkeys(b.form for b in BACKENDS if b.role == role and not b.local))
    return ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else forms[0]


def check_server_url(role: Role, url: str) -> tuple[SpeechBackend[Any], ServerUrl]:
    """The server backend ``url`` names and its parts; a one-line ConfigError if it names none."""
    label = role.upper()
    parts = split_server_url(label, url)
    found = [b for b in BACKENDS if b.role == role and parts.scheme in b.schemes]
    if not found:
        raise ConfigError(f"{label} server URL {parts.shown} is not one of {server_forms(role)}")
    (backend,) = found
    backend.shape(parts, backend.form)
    for option, value in parts.options.items():
        if option not in backend.options:
            known = ", ".join(sorted(backend.options))
            raise ConfigError(f"{label} server URL {parts.shown}: unknown option {option!r}, known: {known}")
        try:
            backend.options[option](value)
        except ValueError as exc:
            raise ConfigError(f"{label} server URL {parts.shown}: {option} {exc}") from exc
    return backend, parts


def local_backend(role: Role, model: str | None) -> tuple[SpeechBackend[Any], str | None]:
    """The local backend a model setting names (``NAME:MODEL``, or the role's first) and the model."""
    local = [b for b in BACKENDS if b.role == role and b.local]
    if model is not None and ":" in model:
        name, rest = model.split(":", 1)
        for backend in local:
            if backend.name == name:
                return backend, rest or None
    return local[0], model


def _prepare(
    table: tuple[SpeechBackend[Part], ...],
    role: Role,
    model: str | None,
    url: str | None,
    api_key: str | None,
    limits: Limits | None,
    tuning: Mapping[str, Any] | None,
) -> Callable[[], Part]:
    limits, tuning = limits or Limits(), tuning or {}
    if url is not None:
        named, parts = check_server_url(role, url)
        backend = next(b for b in table if b is named)
        assert backend.open is not None
        _refuse_tuning(backend, tuning, parts.shown)
        server = backend.open
        return lambda: server(parts, api_key, limits)
    named, model = local_backend(role, model)
    backend = next(b for b in table if b is named)
    assert backend.prepare is not None
    _refuse_tuning(backend, tuning, backend.name)
    return backend.prepare(model, tuning)


def _refuse_tuning(backend: SpeechBackend[Any], tuning: Mapping[str, Any], what: str) -> None:
    unknown = sorted(set(tuning) - backend.tuning)
    if unknown:
        name = unknown[0].replace("_", "-")
        raise ConfigError(f"--{name} is not something {what} ({backend.summary}) takes")


def prepare_transcriber(
    choice: SpeechChoice, *, limits: Limits | None = None, tuning: Mapping[str, Any] | None = None
) -> Callable[[], Transcriber]:
    """The recogniser ``choice`` names, its model found now (a one-line error if not), opened when called."""
    return _prepare(TRANSCRIBERS, "asr", choice.asr_model, choice.asr_url, choice.api_key, limits, tuning)


def prepare_synthesizer(
    choice: SpeechChoice, *, limits: Limits | None = None, tuning: Mapping[str, Any] | None = None
) -> Callable[[], Synthesizer]:
    """The voice ``choice`` names, its model found now (a one-line error if not), opened when called."""
    return _prepare(SYNTHESIZERS, "tts", choice.tts_voice, choice.tts_url, choice.api_key, limits, tuning)


@contextmanager
def opened(prepared: Callable[[], Part]) -> Iterator[Part]:
    """The prepared part for the block, its server connections closed after it (a local model has none)."""
    part = prepared()
    try:
        yield part
    finally:
        if isinstance(part, Closing):
            part.close()


def transcriber_for(
    url: str, *, api_key: str | None = None, limits: Limits | None = None
) -> ServerTranscriber:
    """The recogniser at server ``url``, ready to use (and to close); a ConfigError if ``url`` names none."""
    opened = prepare_transcriber(SpeechChoice(asr_url=url, api_key=api_key), limits=limits)()
    assert isinstance(opened, Closing)  # every server backend does (tests/test_speech_backends.py)
    return cast(ServerTranscriber, opened)


def synthesizer_for(
    url: str, *, api_key: str | None = None, limits: Limits | None = None
) -> ServerSynthesizer:
    """The voice at server ``url``, ready to use (and to close); a ConfigError if ``url`` names none."""
    opened = prepare_synthesizer(SpeechChoice(tts_url=url, api_key=api_key), limits=limits)()
    assert isinstance(opened, Closing)  # every server backend does (tests/test_speech_backends.py)
    return cast(ServerSynthesizer, opened)
