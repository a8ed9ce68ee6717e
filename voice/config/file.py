"""The config file: where it is, and its TOML read and checked key by key (an error names key and file)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from voice.config.keys import BY_NAME, PHRASE_LISTS, SECRETS, SECTIONS, BadValue, in_both_lists
from voice.errors import ConfigError
from voice.tools.mcp_settings import McpServerSettings, parse_mcp_servers


def default_path() -> Path:
    """``$XDG_CONFIG_HOME/voice/config.toml``, usually ``~/.config/voice/config.toml``."""
    return Path(platformdirs.user_config_dir("voice")) / "config.toml"


@dataclass(frozen=True)
class ConfigFile:
    """What a file sets: checked values by key (``kiosk.port``) and its MCP servers."""

    path: Path
    values: Mapping[str, Any] = field(default_factory=dict)
    mcp_servers: tuple[McpServerSettings, ...] = ()


def find_config_file(given: Path | None) -> ConfigFile | None:
    """The file ``--config`` names (it must exist) or the default one if there is one."""
    if given is not None:
        if not given.expanduser().exists():
            raise ConfigError(
                f"config file {given} does not exist (`voice config init --config {given}` writes one)"
            )
        return read_config_file(given.expanduser())
    path = default_path()
    return read_config_file(path) if path.exists() else None


def read_config_file(path: Path) -> ConfigFile:
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 text at byte {exc.start}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    return check_document(document, path)


def check_document(document: Mapping[str, Any], path: Path) -> ConfigFile:
    """Every key known, every value the right type and in range; otherwise the first problem, in one line."""
    values: dict[str, Any] = {}
    servers: tuple[McpServerSettings, ...] = ()
    for section, table in document.items():
        if section == "mcp":
            servers = _mcp_servers(table, path)
            continue
        if section not in SECTIONS:
            raise ConfigError(f"{path}: unknown key {section} (known: {', '.join((*SECTIONS, 'mcp'))})")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{path}: {section} must be a table ([{section}])")
        for name, value in table.items():
            dotted = f"{section}.{name}"
            if dotted in SECRETS:
                raise ConfigError(
                    f"{path}: {dotted} is a secret and is never read from a file: set {SECRETS[dotted]}"
                )
            key = BY_NAME.get(dotted)
            if key is None:
                raise ConfigError(f"{path}: unknown key {dotted}")
            try:
                checked = key.check(value)
            except BadValue as exc:
                raise ConfigError(f"{path}: {dotted} {exc}") from exc
            values[dotted] = (
                _beside(path, checked) if isinstance(checked, str) and key.is_path(checked) else checked
            )
    if "llm.url" in values and "llm.gguf" in values:
        raise ConfigError(f"{path}: give llm.url or llm.gguf (a model to run locally), not both")
    both = in_both_lists(*(values.get(name, BY_NAME[name].default) for name in PHRASE_LISTS))
    if both is not None:
        raise ConfigError(
            f"{path}: turn.backchannels and turn.stop_phrases both hold {both!r}; a phrase is one or the "
            "other"
        )
    return ConfigFile(path, values, servers)


def _beside(path: Path, value: str) -> str:
    """A relative path in the file means one next to the file, wherever voice runs from."""
    return os.fspath(path.parent / value) if not value.startswith("~") else value


def _mcp_servers(table: Any, path: Path) -> tuple[McpServerSettings, ...]:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: mcp must be a table ([mcp.servers.NAME])")
    unknown = sorted(set(table) - {"servers"})
    if unknown:
        raise ConfigError(f"{path}: unknown key mcp.{unknown[0]}")
    servers = table.get("servers", {})
    if not isinstance(servers, Mapping):
        raise ConfigError(f"{path}: mcp.servers must be a table ([mcp.servers.NAME])")
    return parse_mcp_servers(servers, os.fspath(path))
