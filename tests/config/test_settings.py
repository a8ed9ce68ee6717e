"""File < environment < flags, key by key, and where each value came from."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from voice.cli import build_parser
from voice.config.settings import Settings, load_settings
from voice.engine.overlap import DEFAULT_BACKCHANNELS, DEFAULT_STOP_PHRASES, Overlap
from voice.errors import ConfigError

WriteConfig = Callable[[str], Path]


def settings_for(argv: list[str], environ: Mapping[str, str] | None = None) -> Settings:
    return load_settings(build_parser().parse_args(argv), environ or {})


FILE = """
[llm]
url = "http://file-host:8080/v1"
model = "from-file"
context_tokens = 4096
[asr]
model = "whisper-base.en"
[tts]
voice = "~/voices/amy.onnx"
[audio]
input_device = 3
output_device = "pulse"
echo_cancel = false
[kiosk]
port = 9000
allow_origins = ["https://screen.example"]
fresh_after_s = 30
wake = "hey kiosk"
"""


def test_nothing_anywhere_gives_the_defaults() -> None:
    settings = settings_for(["kiosk"])

    assert settings.file is None
    assert settings.llm.embedded
    assert (settings.asr_model, settings.tts_voice, settings.input_device) == (None, None, None)
    assert settings.echo_cancel is True
    assert (settings.kiosk.host, settings.kiosk.port, settings.kiosk.audio) == ("127.0.0.1", 8765, "device")
    assert settings.kiosk.keep_sessions == 200
    assert settings.mcp_servers == ()
    assert {settings.source(key) for key in ("llm.url", "kiosk.port", "asr.model")} == {"default"}


def test_the_file_sets_every_kind_of_value(write_config: WriteConfig) -> None:
    path = write_config(FILE)
    settings = settings_for(["chat", "--config", str(path)])

    assert (settings.llm.url, settings.llm.model, settings.llm.context_tokens) == (
        "http://file-host:8080/v1",
        "from-file",
        4096,
    )
    assert settings.asr_model == "whisper-base.en"
    assert settings.tts_voice == str(Path.home() / "voices" / "amy.onnx")
    assert (settings.input_device, settings.output_device, settings.echo_cancel) == (3, "pulse", False)
    assert settings.kiosk.port == 9000
    assert settings.kiosk.allow_origins == ("https://screen.example",)
    assert settings.kiosk.fresh_after_s == 30.0
    assert settings.kiosk.wake == "hey kiosk"
    assert settings.source("kiosk.port") == f"file {path}"
    assert settings.file == path


def test_the_environment_wins_over_the_file(write_config: WriteConfig) -> None:
    path = write_config(FILE)
    environ = {"VOICE_LLM_MODEL": "from-env", "VOICE_CONTEXT_TOKENS": "16384"}
    settings = settings_for(["chat", "--config", str(path)], environ)

    assert settings.llm.url == "http://file-host:8080/v1"
    assert settings.llm.model == "from-env"
    assert settings.llm.context_tokens == 16384
    assert settings.source("llm.url") == f"file {path}"
    assert settings.source("llm.model") == "environment VOICE_LLM_MODEL"
    assert settings.source("llm.context_tokens") == "environment VOICE_CONTEXT_TOKENS"


def test_flags_win_over_the_environment_and_the_file(write_config: WriteConfig) -> None:
    path = write_config(FILE)
    environ = {"VOICE_LLM_MODEL": "from-env", "VOICE_LLM_URL": "http://env-host:1/v1"}
    argv = [
        "kiosk",
        "--config",
        str(path),
        "--llm-model",
        "from-flag",
        "--port",
        "0",
        "--asr-model",
        "/m/whisper",
    ]
    argv += ["--echo-cancel", "--allow-origin", "http://a.example", "--allow-origin", "http://b.example"]
    settings = settings_for(argv, environ)

    assert settings.llm.url == "http://env-host:1/v1"
    assert settings.llm.model == "from-flag"
    assert settings.kiosk.port == 0
    assert settings.asr_model == "/m/whisper"
    assert settings.echo_cancel is True
    assert settings.kiosk.allow_origins == ("http://a.example", "http://b.example")
    assert settings.source("llm.url") == "environment VOICE_LLM_URL"
    assert settings.source("llm.model") == "flag --llm-model"
    assert settings.source("kiosk.port") == "flag --port"
    assert settings.source("audio.echo_cancel") == "flag --echo-cancel"
    assert settings.source("tts.voice") == f"file {path}"


def test_a_gguf_at_a_higher_level_replaces_a_server_from_the_file(write_config: WriteConfig) -> None:
    path = write_config(FILE)
    settings = settings_for(["chat", "--config", str(path)], {"VOICE_LLM_GGUF": "/models/tiny.gguf"})

    assert settings.llm.embedded
    assert settings.llm.gguf == Path("/models/tiny.gguf")
    assert settings.source("llm.url") == "unset: environment VOICE_LLM_GGUF gives llm.gguf"


def test_the_default_file_is_read_from_the_user_config_directory(config_home: Path) -> None:
    path = config_home / "voice" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[kiosk]\nhost = "0.0.0.0"\n')

    settings = settings_for(["kiosk"], {"VOICE_TOKEN": "secret"})

    assert settings.file == path
    assert settings.kiosk.host == "0.0.0.0"
    assert settings.kiosk.token == "secret"
    assert "secret" not in repr(settings)


def test_secrets_come_only_from_the_environment(write_config: WriteConfig) -> None:
    path = write_config('[llm]\nurl = "https://api.example/v1"\nmodel = "m"\n')
    environ = {"VOICE_LLM_API_KEY": "sk-1", "VOICE_LLM_HEADERS": '{"X-Org": "org-9"}'}
    settings = settings_for(["chat", "--config", str(path)], environ)

    assert settings.llm.api_key == "sk-1"
    assert settings.llm.extra_headers == (("X-Org", "org-9"),)
    assert settings.source("llm.api_key") == "environment VOICE_LLM_API_KEY"


def test_mcp_servers_keep_the_shape_their_parser_gives(write_config: WriteConfig) -> None:
    path = write_config(
        '[mcp.servers.files]\ncommand = ["python", "-m", "files"]\nenv = {ROOT = "/srv"}\ntools = ["read"]\n'
        '[mcp.servers.web]\nurl = "http://127.0.0.1:9000/mcp"\n'
    )
    settings = settings_for(["simulate", "s.json", "--out", "o", "--config", str(path)])

    files, web = settings.mcp_servers
    assert (files.name, files.command, files.env, files.tools) == (
        "files",
        ("python", "-m", "files"),
        (("ROOT", "/srv"),),
        ("read",),
    )
    assert (web.name, web.url, web.command) == ("web", "http://127.0.0.1:9000/mcp", None)
    assert settings.source("mcp.servers.web") == f"file {path}"


@pytest.mark.parametrize(
    ("argv", "environ", "complaint"),
    [
        (["kiosk", "--port", "70000"], {}, "--port must be a whole number from 0 to 65535, not 70000"),
        (["kiosk", "--fresh-after", "0"], {}, "--fresh-after must be a number of seconds above 0"),
        (["kiosk", "--keep-sessions", "0"], {}, "--keep-sessions must be a whole number from 1"),
        (["chat"], {"VOICE_CONTEXT_TOKENS": "8k"}, "VOICE_CONTEXT_TOKENS must be a whole number"),
        (["chat"], {"VOICE_LLM_URL": "ftp://h/v1", "VOICE_LLM_MODEL": "m"}, "VOICE_LLM_URL must be an http"),
        (["chat", "--llm-url", "http://h:1/v1"], {}, "needs a model name"),
        (["chat", "--llm-url", "http://h:1/v1", "--llm-model", "m", "--llm-gguf", "x.gguf"], {}, "not both"),
    ],
)
def test_a_bad_flag_or_variable_is_one_line_naming_it(
    argv: list[str], environ: dict[str, str], complaint: str
) -> None:
    with pytest.raises(ConfigError, match=complaint) as raised:
        settings_for(argv, environ)
    assert "\n" not in str(raised.value)


def test_relative_paths_in_the_file_are_beside_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "config.toml"
    path.write_text(
        '[llm]\ngguf = "models/tiny.gguf"\n[asr]\nmodel = "whisper/base"\n'
        '[tts]\nvoice = "amy.onnx"\n[kiosk]\nsessions = "/var/kiosk"\n'
    )
    settings = settings_for(["kiosk", "--config", str(path)])

    assert settings.llm.gguf == folder / "models" / "tiny.gguf"
    assert settings.asr_model == str(folder / "whisper" / "base")
    assert settings.tts_voice == str(folder / "amy.onnx")
    assert settings.kiosk.sessions == Path("/var/kiosk")

    named = settings_for(["kiosk", "--config", str(path), "--tts-voice", "piper-en_GB-alba-medium"])
    assert named.tts_voice == "piper-en_GB-alba-medium"
    assert named.asr_model == str(folder / "whisper" / "base")


@pytest.mark.parametrize("command", ["chat", "kiosk", "simulate"])
def test_eagerness_comes_from_the_file_and_a_flag_overrides_it(
    command: str, write_config: WriteConfig
) -> None:
    path = write_config('[turn]\neagerness = "high"\n')
    scenario = ["audio/scenarios/plain-turn.json", "--out", "out"] if command == "simulate" else []

    from_file = settings_for([command, *scenario, "--config", str(path)])
    flagged = settings_for([command, *scenario, "--config", str(path), "--eagerness", "low"])

    assert settings_for([command, *scenario]).eagerness.value == "auto"
    assert (from_file.eagerness.value, from_file.source("turn.eagerness")) == ("high", f"file {path}")
    assert (flagged.eagerness.value, flagged.source("turn.eagerness")) == ("low", "flag --eagerness")


def test_an_unknown_eagerness_is_one_line_naming_the_key(write_config: WriteConfig) -> None:
    path = write_config('[turn]\neagerness = "eager"\n')

    with pytest.raises(ConfigError, match=r"turn.eagerness must be one of low, auto, high, not \"eager\""):
        settings_for(["chat", "--config", str(path)])


def test_backchannels_and_stop_phrases_come_from_the_file_or_default_to_english(
    write_config: WriteConfig,
) -> None:
    path = write_config('[turn]\nbackchannels = ["ja", "genau"]\n')

    configured = settings_for(["chat", "--config", str(path)])
    default = settings_for(["chat"])

    assert configured.backchannels == ("ja", "genau")
    assert configured.source("turn.backchannels") == f"file {path}"
    assert configured.stop_phrases == DEFAULT_STOP_PHRASES
    assert default.backchannels == DEFAULT_BACKCHANNELS
    assert configured.overlap.verdict("Genau.") is Overlap.BACKCHANNEL
    assert configured.overlap.verdict("Yeah.") is Overlap.CUT_IN
