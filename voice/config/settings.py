"""The settings in effect: the config file, then the environment, then flags, and where each came from."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from voice.audio.devices import DeviceSpec
from voice.config.file import ConfigFile, default_path, find_config_file
from voice.config.keys import ENV_SPEECH_API_KEY, KEYS, SECRETS, BadValue, Key
from voice.config.kiosk import TOKEN_ENV, default_folder
from voice.config.llm import ENV_API_KEY, ENV_HEADERS, ENV_MODEL, LlmConfig, resolve_llm_config
from voice.config.telemetry import TelemetrySettings
from voice.engine.hold import Eagerness
from voice.engine.overlap import OverlapPhrases
from voice.errors import ConfigError
from voice.speech_backends import SpeechChoice
from voice.tools.mcp_settings import McpServerSettings

DEFAULT = "default"


class _Picked(NamedTuple):
    value: Any
    source: str
    level: int  # 0 default, 1 file, 2 environment, 3 flag


@dataclass(frozen=True)
class KioskSettings:
    """How `voice kiosk` serves: ``token`` comes from VOICE_TOKEN only."""

    host: str
    port: int
    audio: str
    allow_origins: tuple[str, ...]
    fresh_after_s: float
    wake: str | None
    sessions: Path
    keep_sessions: int
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Settings:
    """Everything a command that runs the assistant is configured with.

    ``sources`` maps each key (``kiosk.port``, ``llm.api_key``, ``mcp.servers.NAME``) to where its value came
    from: ``file PATH``, ``environment VAR``, ``flag --x`` or ``default``.
    """

    llm: LlmConfig
    asr_model: str | None
    asr_context: bool  # whisper hears the assistant's last question as context
    tts_voice: str | None
    asr_url: str | None  # a speech server used instead of the local model
    tts_url: str | None
    input_device: DeviceSpec
    output_device: DeviceSpec
    echo_cancel: bool
    eagerness: Eagerness
    speaker: str  # [turn] speaker: "conversation" (only its speaker takes turns) or "anyone"
    backchannels: tuple[str, ...]
    stop_phrases: tuple[str, ...]
    kiosk: KioskSettings
    mcp_servers: tuple[McpServerSettings, ...]
    file: Path | None  # the file read; None when there was none
    sources: Mapping[str, str]
    speech_api_key: str | None = field(default=None, repr=False)  # for asr.url and tts.url
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    wake_word: str | None = None  # sleep until this wake word (voice/wake/models.py)
    awake_s: float = 10.0  # with a wake word: the quiet after which it sleeps again

    @property
    def overlap(self) -> OverlapPhrases:
        """The words over a reply that take no turn: backchannels and stop phrases."""
        return OverlapPhrases(self.backchannels, self.stop_phrases)

    @property
    def speech(self) -> SpeechChoice:
        """The whisper and piper to load, or the speech servers to use instead, for this eagerness."""
        return self.speech_for(self.eagerness)

    def speech_for(self, eagerness: Eagerness) -> SpeechChoice:
        """The speech to load for a run at ``eagerness``: under ``high`` whisper chooses words greedily (the
        beam's 40-80 ms a question is waited for in full there; voice.asr.short_window)."""
        return SpeechChoice(
            self.asr_model,
            self.tts_voice,
            self.asr_url,
            self.tts_url,
            self.speech_api_key,
            self.asr_context,
            asr_greedy=eagerness is Eagerness.HIGH,
        )

    def value(self, key: str) -> Any:
        """The value in effect for ``key`` (``kiosk.port``), as the commands use it."""
        kiosk = self.kiosk
        return {
            "llm.url": self.llm.url,
            "llm.model": self.llm.model,
            "llm.gguf": self.llm.gguf,
            "llm.context_tokens": self.llm.context_tokens,
            "audio.input_device": self.input_device,
            "audio.output_device": self.output_device,
            "audio.echo_cancel": self.echo_cancel,
            "asr.model": self.asr_model,
            "asr.context": self.asr_context,
            "tts.voice": self.tts_voice,
            "turn.eagerness": self.eagerness.value,
            "turn.speaker": self.speaker,
            "turn.backchannels": self.backchannels,
            "turn.stop_phrases": self.stop_phrases,
            "asr.url": self.asr_url,
            "tts.url": self.tts_url,
            "kiosk.host": kiosk.host,
            "kiosk.port": kiosk.port,
            "kiosk.audio": kiosk.audio,
            "kiosk.allow_origins": kiosk.allow_origins,
            "kiosk.fresh_after_s": kiosk.fresh_after_s,
            "kiosk.wake": kiosk.wake,
            "wake.word": self.wake_word,
            "wake.awake_s": self.awake_s,
            "kiosk.sessions": kiosk.sessions,
            "kiosk.keep_sessions": kiosk.keep_sessions,
            "telemetry.otlp_endpoint": self.telemetry.otlp_endpoint,
            "telemetry.include_text": self.telemetry.include_text,
            "telemetry.metrics_port": self.telemetry.metrics_port,
        }[key]

    def source(self, key: str) -> str:
        return self.sources.get(key, DEFAULT)


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """``--config FILE``: read this file, which must exist, instead of the default one (which may not)."""
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"config file to read (default {default_path()}, if it exists); see `voice config show`",
    )


def load_settings(args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
    """The file (``args.config`` or the default), under ``environ``, under the flags in ``args``.

    A command without some flag simply has no such attribute; every bad value is one ConfigError line.
    """
    file = find_config_file(getattr(args, "config", None))
    chosen = {key.name: _choose(key, file, args, environ) for key in KEYS}
    _one_kind_of_llm(chosen)
    value = {name: picked.value for name, picked in chosen.items()}
    sources = {name: picked.source for name, picked in chosen.items()}
    llm = _llm_config(value, environ)
    for secret, variable in SECRETS.items():
        if environ.get(variable, "").strip():
            sources[secret] = f"environment {variable}"
    servers = file.mcp_servers if file is not None else ()
    sources.update({f"mcp.servers.{server.name}": f"file {file.path}" for server in servers if file})
    sessions = value["kiosk.sessions"]
    return Settings(
        llm=llm,
        asr_model=_expand(value["asr.model"]),
        asr_context=value["asr.context"],
        tts_voice=_expand(value["tts.voice"]),
        asr_url=value["asr.url"],
        tts_url=value["tts.url"],
        speech_api_key=environ.get(ENV_SPEECH_API_KEY) or None,
        input_device=value["audio.input_device"],
        output_device=value["audio.output_device"],
        echo_cancel=value["audio.echo_cancel"],
        eagerness=Eagerness(value["turn.eagerness"]),
        speaker=value["turn.speaker"],
        backchannels=tuple(value["turn.backchannels"]),
        stop_phrases=tuple(value["turn.stop_phrases"]),
        kiosk=KioskSettings(
            host=value["kiosk.host"],
            port=value["kiosk.port"],
            audio=value["kiosk.audio"],
            allow_origins=tuple(value["kiosk.allow_origins"]),
            fresh_after_s=value["kiosk.fresh_after_s"],
            wake=value["kiosk.wake"],
            sessions=Path(sessions).expanduser() if sessions is not None else default_folder(),
            keep_sessions=value["kiosk.keep_sessions"],
            token=environ.get(TOKEN_ENV) or None,
        ),
        mcp_servers=servers,
        telemetry=TelemetrySettings(
            value["telemetry.otlp_endpoint"], value["telemetry.include_text"], value["telemetry.metrics_port"]
        ),
        file=file.path if file is not None else None,
        sources=sources,
        wake_word=value["wake.word"],
        awake_s=value["wake.awake_s"],
    )


def flag_text(key: Key, value: Any) -> str:
    """The flag as the user typed it (``--no-echo-cancel`` for a false switch)."""
    assert key.flag is not None
    return f"--no-{key.flag.removeprefix('--')}" if value is False else key.flag


def _choose(
    key: Key, file: ConfigFile | None, args: argparse.Namespace, environ: Mapping[str, str]
) -> _Picked:
    flag = getattr(args, key.dest, None) if key.dest else None
    if flag is not None:
        return _Picked(_checked(key, flag, flag_text(key, flag)), f"flag {flag_text(key, flag)}", 3)
    if key.env and environ.get(key.env, "").strip():
        return _Picked(_checked(key, environ[key.env], key.env), f"environment {key.env}", 2)
    if file is not None and key.name in file.values:
        return _Picked(file.values[key.name], f"file {file.path}", 1)
    return _Picked(key.default, DEFAULT, 0)


def _checked(key: Key, value: Any, where: str) -> Any:
    try:
        return key.check(key.from_text(value) if isinstance(value, str) else value)
    except BadValue as exc:
        raise ConfigError(f"{where} {exc}") from exc


def _one_kind_of_llm(chosen: dict[str, _Picked]) -> None:
    """A server URL and a local GGUF exclude each other: the one set at the higher level wins."""
    url, gguf = chosen["llm.url"], chosen["llm.gguf"]
    if url.value is None or gguf.value is None:
        return
    if url.level == gguf.level:
        raise ConfigError(
            f"give an LLM URL or a GGUF to run locally, not both ({url.source} and {gguf.source})"
        )
    if url.level > gguf.level:
        chosen["llm.gguf"] = _Picked(None, f"unset: {url.source} gives llm.url", 0)
    else:
        chosen["llm.url"] = _Picked(None, f"unset: {gguf.source} gives llm.gguf", 0)


def _llm_config(value: Mapping[str, Any], environ: Mapping[str, str]) -> LlmConfig:
    url, model = value["llm.url"], value["llm.model"]
    if url is not None and model is None:
        raise ConfigError(
            f"the LLM at {url} needs a model name: give --llm-model, {ENV_MODEL} or llm.model in the config"
        )
    context_tokens = value["llm.context_tokens"]
    secrets = {name: environ[name] for name in (ENV_API_KEY, ENV_HEADERS) if name in environ}
    return resolve_llm_config(
        url,
        model,
        value["llm.gguf"],
        secrets,
        context_tokens_flag=str(context_tokens) if context_tokens is not None else None,
    )


def _expand(path_or_name: str | None) -> str | None:
    return os.path.expanduser(path_or_name) if path_or_name is not None else None
