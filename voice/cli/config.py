"""`voice config show` (the settings in use and where each came from); `voice config init` (a template)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from voice.config.file import default_path
from voice.config.flags import (
    add_device_arguments,
    add_kiosk_arguments,
    add_speech_arguments,
    add_turn_arguments,
)
from voice.config.keys import KEYS
from voice.config.llm import add_llm_arguments
from voice.config.settings import Settings, add_config_argument, load_settings
from voice.config.template import render_template
from voice.config.toml_text import toml_value
from voice.errors import ConfigError
from voice.tools.mcp_settings import McpServerSettings

MASK = "********"


def register(subparsers: Any) -> None:
    config = subparsers.add_parser(
        "config", help="show the effective settings, or write a config file to edit"
    )
    actions = config.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser(
        "show",
        help="print every setting in effect and where it came from (file, environment, flag, default)",
        description="Give the flags a command would get to see what it would use.",
    )
    add_config_argument(show)
    add_llm_arguments(show)
    add_speech_arguments(show)
    add_device_arguments(show)
    add_turn_arguments(show)
    add_kiosk_arguments(show)
    show.set_defaults(run=_show)
    init = actions.add_parser("init", help="write a commented config file with every key")
    init.add_argument(
        "--config", type=Path, metavar="FILE", help=f"where to write it (default {default_path()})"
    )
    init.add_argument("--force", action="store_true", help="replace an existing file")
    init.set_defaults(run=_init)


def _show(args: argparse.Namespace) -> int:
    settings = load_settings(args, os.environ)
    print(f"config file: {settings.file or f'none ({default_path()} does not exist)'}")
    print("\n".join(describe(settings)))
    return 0


def describe(settings: Settings) -> list[str]:
    """One line per setting: ``key = value  # source``, with every secret masked."""
    rows = [(key.name, _shown(settings.value(key.name))) for key in KEYS]
    llm = settings.llm
    if llm.api_key is not None:
        rows.append(("llm.api_key", toml_value(MASK)))
    if llm.extra_headers:
        rows.append(("llm.headers", toml_value({name: MASK for name, _ in llm.extra_headers})))
    if settings.kiosk.token is not None:
        rows.append(("kiosk.token", toml_value(MASK)))
    width = max(len(f"{name} = {value}") for name, value in rows)  # MCP tables are long: they run on
    rows += [
        (f"mcp.servers.{server.name}", toml_value(_server_table(server))) for server in settings.mcp_servers
    ]
    return [f"{f'{name} = {value}':<{width}}  # {settings.source(name)}" for name, value in rows]


def _server_table(server: McpServerSettings) -> dict[str, Any]:
    table: dict[str, Any] = {"command": server.command} if server.command else {"url": server.url}
    if server.env:
        table["env"] = {name: MASK for name, _ in server.env}
    if server.headers_env:
        table["headers_env"] = dict(server.headers_env)  # variable names, not their values
    table["timeout_s"] = server.timeout_s
    if server.tools is not None:
        table["tools"] = server.tools
    return table


def _shown(value: Any) -> str:
    return "(not set)" if value is None else toml_value(value)


def _init(args: argparse.Namespace) -> int:
    path: Path = (args.config or default_path()).expanduser()
    if path.exists() and not args.force:
        raise ConfigError(f"{path} already exists; pass --force to replace it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_template(), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
    print(f"wrote {path}; edit it, then check it with `voice config show`")
    return 0
