"""`voice config show` and `voice config init` as a user runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from voice.cli import build_parser, main
from voice.config.keys import KEYS
from voice.config.settings import load_settings
from voice.config.template import render_template

WriteConfig = Callable[[str], Path]
SECRETS = {
    "VOICE_LLM_API_KEY": "sk-live-do-not-print",
    "VOICE_LLM_HEADERS": '{"X-Org": "org-private-9"}',
    "VOICE_TOKEN": "kiosk-token-77",
}


def shown(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, tuple[str, str]]:
    """`voice config show` parsed into key -> (value, source)."""
    assert main(["config", "show", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [re.fullmatch(r"(\S+) = (.*?)\s+# (.*)", line) for line in lines[1:]]
    return {row[1]: (row[2], row[3]) for row in rows if row}


def test_show_says_where_each_value_came_from(
    write_config: WriteConfig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(
        '[llm]\nmodel = "from-file"\ncontext_tokens = 2048\n[kiosk]\nport = 9000\nwake = "hi"\n'
    )
    monkeypatch.setenv("VOICE_CONTEXT_TOKENS", "4096")

    rows = shown(capsys, "--config", str(path), "--wake", "hello there", "--no-echo-cancel")

    assert rows["llm.model"] == ('"from-file"', f"file {path}")
    assert rows["llm.context_tokens"] == ("4096", "environment VOICE_CONTEXT_TOKENS")
    assert rows["kiosk.port"] == ("9000", f"file {path}")
    assert rows["kiosk.wake"] == ('"hello there"', "flag --wake")
    assert rows["audio.echo_cancel"] == ("false", "flag --no-echo-cancel")
    assert rows["kiosk.host"] == ('"127.0.0.1"', "default")
    assert rows["llm.url"] == ("(not set)", "default")
    assert {key.name for key in KEYS} <= set(rows)


def test_show_masks_every_secret(
    write_config: WriteConfig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(
        '[mcp.servers.notes]\ncommand = ["notes-server"]\nenv = {NOTES_KEY = "notes-secret-5"}\n'
    )
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)

    assert main(["config", "show", "--config", str(path)]) == 0
    out = capsys.readouterr().out

    for secret in ("sk-live-do-not-print", "org-private-9", "kiosk-token-77", "notes-secret-5"):
        assert secret not in out
    assert re.search(r'llm\.api_key = "\*+" +# environment VOICE_LLM_API_KEY', out)
    assert re.search(r'llm\.headers = \{X-Org = "\*+"\} +# environment VOICE_LLM_HEADERS', out)
    assert re.search(r'kiosk\.token = "\*+" +# environment VOICE_TOKEN', out)
    assert re.search(rf'mcp\.servers\.notes = .*NOTES_KEY = "\*+".* # file {re.escape(str(path))}', out)


def test_init_writes_a_template_that_loads_as_the_defaults(
    config_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "init"]) == 0
    path = config_home / "voice" / "config.toml"
    assert str(path) in capsys.readouterr().out

    settings = load_settings(build_parser().parse_args(["kiosk"]), {})
    defaults = load_settings(build_parser().parse_args(["kiosk", "--config", "/dev/null"]), {})
    assert settings.file == path
    assert {key.name: settings.value(key.name) for key in KEYS} == {
        key.name: defaults.value(key.name) for key in KEYS
    }


def test_init_documents_every_key_and_each_example_loads(tmp_path: Path) -> None:
    template = render_template()
    for key in KEYS:
        assert f"\n#{key.field} = " in template, key.name
    # Uncomment every example (but the GGUF, which excludes the URL): the result is a valid config.
    uncommented = re.sub(r"^#(?=[a-z_]+ = |\[)", "", template, flags=re.MULTILINE)
    uncommented = uncommented.replace('gguf = "~/models/model.gguf"\n', "")
    path = tmp_path / "every-key.toml"
    path.write_text(uncommented)

    settings = load_settings(build_parser().parse_args(["kiosk", "--config", str(path)]), {})

    document = tomllib.loads(uncommented)
    assert settings.kiosk.allow_origins == tuple(document["kiosk"]["allow_origins"])
    assert settings.llm.url == document["llm"]["url"]
    assert [server.name for server in settings.mcp_servers] == ["files", "search"]
    assert {settings.source(key.name) for key in KEYS if key.name != "llm.gguf"} == {f"file {path}"}


def test_init_never_overwrites_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.toml"
    path.write_text("[kiosk]\nport = 1\n")

    assert main(["config", "init", "--config", str(path)]) == 1
    assert capsys.readouterr().err == f"voice: error: {path} already exists; pass --force to replace it\n"
    assert path.read_text() == "[kiosk]\nport = 1\n"

    assert main(["config", "init", "--config", str(path), "--force"]) == 0
    assert path.read_text() == render_template()


def test_the_cli_reports_a_bad_key_in_one_line(write_config: WriteConfig, tmp_path: Path) -> None:
    path = write_config("[kiosk]\nport = 99999\n")

    result = subprocess.run(
        [sys.executable, "-m", "voice", "config", "show", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("VOICE_")},
            "XDG_CONFIG_HOME": str(tmp_path),
        },
    )

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"voice: error: {path}: kiosk.port must be a whole number from 0 to 65535, not 99999\n"
    )
