"""A bad config file is one line naming the key and the file: never a traceback, never ignored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from voice.cli import build_parser
from voice.config.settings import load_settings
from voice.errors import ConfigError

WriteConfig = Callable[[str], Path]


def load(path: Path) -> None:
    load_settings(build_parser().parse_args(["kiosk", "--config", str(path)]), {})


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[kiosk]\nprot = 8765\n", "unknown key kiosk.prot"),
        ("[kiosks]\nport = 8765\n", "unknown key kiosks"),
        ("[mcp]\nserver = {}\n", "unknown key mcp.server"),
        ('[mcp.servers.x]\ncommand = ["a"]\nshell = true\n', "unknown key mcp.servers.x.shell"),
        ('[kiosk]\nport = "8765"\n', 'kiosk.port must be a whole number from 0 to 65535, not "8765"'),
        ("[kiosk]\nport = 70000\n", "kiosk.port must be a whole number from 0 to 65535, not 70000"),
        ("[kiosk]\nport = true\n", "kiosk.port must be a whole number"),
        ("[kiosk]\nfresh_after_s = -1\n", "kiosk.fresh_after_s must be a number of seconds above 0"),
        ("[kiosk]\nkeep_sessions = 0\n", "kiosk.keep_sessions must be a whole number from 1"),
        ('[kiosk]\naudio = "speaker"\n', "kiosk.audio must be one of device, none, websocket"),
        ('[kiosk]\nallow_origins = "https://a"\n', "kiosk.allow_origins must be a list"),
        ('[kiosk]\nwake = ""\n', "kiosk.wake must be non-empty text"),
        ("[audio]\necho_cancel = 1\n", "audio.echo_cancel must be true or false, not 1"),
        ("[audio]\ninput_device = -2\n", "audio.input_device must be a device name or index"),
        ("[asr]\nmodel = 5\n", "asr.model must be non-empty text, not 5"),
        ("[tts]\nvoice = []\n", "tts.voice must be non-empty text"),
        ('[llm]\nurl = "ftp://host/v1"\n', "llm.url must be an http:// or https:// URL"),
        ("[llm]\ncontext_tokens = 0\n", "llm.context_tokens must be a whole number from 1"),
        ('[llm]\nurl = "http://h/v1"\nmodel = "m"\ngguf = "x.gguf"\n', "give llm.url or llm.gguf"),
        ('[llm]\napi_key = "sk-secret"\n', "llm.api_key is a secret .* set VOICE_LLM_API_KEY"),
        ("kiosk = 3\n", "kiosk must be a table"),
        ("[mcp.servers.x]\ntimeout_s = 5\n", "mcp.servers.x needs exactly one of command"),
        ('[turn]\nbackchannels = "yeah"\n', "turn.backchannels must be a list of non-empty texts"),
        ('[turn]\nstop_phrases = ["stop", "..."]\n', 'must list phrases with words in them, not "..."'),
        ('[turn]\nstop_phrases = ["stop", "okay"]\n', "backchannels and turn.stop_phrases both hold 'okay'"),
        ('[turn]\nbackchannels = ["yeah", "nope"]\n', "turn.backchannels must not hold 'nope'.* corrects"),
        ("[kiosk\nport = 1\n", "not valid TOML: .*line 1"),
        ("[kiosk]\nport = 1\nport = 2\n", "not valid TOML"),
    ],
)
def test_each_bad_file_is_one_line_naming_key_and_file(
    write_config: WriteConfig, text: str, complaint: str
) -> None:
    path = write_config(text)

    with pytest.raises(ConfigError, match=complaint) as raised:
        load(path)

    message = str(raised.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    assert "sk-secret" not in message


def test_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[kiosk]\nwake = "\xff"\n')

    with pytest.raises(ConfigError, match=f"{path}: not valid TOML"):
        load(path)


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file .*missing\.toml does not exist"):
        load(tmp_path / "missing.toml")


def test_an_unreadable_file_is_an_error(write_config: WriteConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config("[kiosk]\nport = 1\n")

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")  # what a chmod 0 file gives anyone but root

    monkeypatch.setattr(Path, "open", refuse)

    with pytest.raises(ConfigError, match=f"cannot read config file {path}: Permission denied"):
        load(path)


def test_a_folder_in_place_of_the_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"cannot read config file {tmp_path}"):
        load(tmp_path)


def test_a_bad_default_file_is_not_ignored(config_home: Path) -> None:
    path = config_home / "voice" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[asr]\nmodle = 'base'\n")

    with pytest.raises(ConfigError, match=f"{path}: unknown key asr.modle"):
        load_settings(build_parser().parse_args(["chat"]), {})


def test_an_endless_quiet_time_is_out_of_range(write_config: WriteConfig) -> None:
    with pytest.raises(ConfigError, match=r"kiosk\.fresh_after_s must be .* \(at most 31536000\), not inf"):
        load(write_config("[kiosk]\nfresh_after_s = inf\n"))
