"""`voice kiosk`: the assistant headless, with its page and event API on one port (design §7, §8)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from voice.chat.commands import REPLY_TOKENS
from voice.chat.driver import DeviceSettings
from voice.components import context_budget
from voice.conversation.continuation import Conversation
from voice.errors import ConfigError
from voice.kiosk.assistant import KioskAssistant
from voice.kiosk.audio import AUDIO_MODES, AudioSetup, audio_setup, check_mode
from voice.kiosk.keeper import KeeperSettings, SessionKeeper
from voice.kiosk.security import TOKEN_ENV, check_bind
from voice.kiosk.server import KioskServer, ServerSettings
from voice.kiosk.sessions import KEEP, SessionFiles, default_folder
from voice.llm.config import LlmConfig, add_llm_arguments, config_from_args
from voice.llm.embedded import open_chat_model
from voice.llm.port import ChatSettings, SizedChatModel


def register(subparsers: Any) -> None:
    kiosk = subparsers.add_parser(
        "kiosk", help="run headless for visitors: the page at / and the event API at /ws on one port"
    )
    kiosk.add_argument(
        "--host", default="127.0.0.1", help=f"address to listen on (beyond loopback: {TOKEN_ENV})"
    )
    kiosk.add_argument("--port", type=int, default=8765, help="port for the page and the API (0: any free)")
    kiosk.add_argument(
        "--audio", default="device", choices=AUDIO_MODES,
        help="device: this machine's mic and speaker; none: typed input only, no sound; "
        "websocket: the page's mic and speaker (its Talk button)",
    )  # fmt: skip
    kiosk.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN",
        help="another web origin whose pages may connect (the page's own always may); repeatable",
    )  # fmt: skip
    kiosk.add_argument(
        "--fresh-after", type=float, default=120.0, metavar="SECONDS",
        help="after this much quiet the next visitor gets a fresh conversation (default 120)",
    )  # fmt: skip
    kiosk.add_argument("--wake", metavar="PHRASE", help='sleep until this phrase is heard, e.g. "hey kiosk"')
    kiosk.add_argument("--sessions", type=Path, help=f"folder for session logs (default {default_folder()})")
    kiosk.add_argument("--keep-sessions", type=int, default=KEEP, help=f"session logs kept (default {KEEP})")
    kiosk.add_argument("--input-device", help="microphone: index or name from `voice devices`")
    kiosk.add_argument("--output-device", help="speaker: index or name from `voice devices`")
    kiosk.add_argument("--no-echo-cancel", action="store_true", help="for headsets: no echo to cancel")
    add_llm_arguments(kiosk)
    kiosk.set_defaults(run=_kiosk)


def _device(text: str | None) -> int | str | None:
    return int(text) if text is not None and text.isdigit() else text


def _kiosk(args: argparse.Namespace) -> int:
    check_mode(args.audio)
    token = os.environ.get(TOKEN_ENV) or None
    check_bind(args.host, token)
    if args.fresh_after <= 0:
        raise ConfigError("--fresh-after must be a positive number of seconds")
    files = SessionFiles(args.sessions or default_folder(), args.keep_sessions)
    config = config_from_args(args, os.environ)
    if args.audio != "none":
        print("loading whisper and piper...", flush=True)
    devices = DeviceSettings(_device(args.input_device), _device(args.output_device))
    audio = audio_setup(args.audio, devices, echo_cancel=not args.no_echo_cancel)
    server = ServerSettings(args.host, args.port, token, tuple(args.allow_origin))
    keeper = KeeperSettings(args.fresh_after, args.wake)
    with open_chat_model(config) as model:
        asyncio.run(_serve(model, config, audio, files, server, keeper))
    return 0


async def _serve(
    model: SizedChatModel,
    config: LlmConfig,
    audio: AudioSetup,
    files: SessionFiles,
    server_settings: ServerSettings,
    keeper_settings: KeeperSettings,
) -> None:
    settings = ChatSettings(max_tokens=REPLY_TOKENS)
    public = {
        "audio": audio.mode,
        "wake": keeper_settings.wake,
        "fresh_after_s": keeper_settings.fresh_after_s,
        "llm": "embedded" if config.embedded else config.model,
        "token_required": server_settings.token is not None,
    }
    keeper = SessionKeeper(keeper_settings, files, public)
    conversation = Conversation(context_budget(model, settings))
    assistant = KioskAssistant(model, settings, audio, conversation, files.create(), keeper.gate)
    server = KioskServer(keeper, server_settings, audio.browser)
    keeper.attach(assistant, server.broadcast)
    try:
        listening = await server.start()
    except OSError as exc:
        assistant.close()
        raise ConfigError(
            f"cannot listen on {server_settings.host}:{server_settings.port}: {exc.strerror}"
        ) from exc
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, assistant.stop)
    host, port = listening.sockets[0].getsockname()[:2]
    print(f"kiosk: http://{host}:{port}/ (audio {audio.mode}; session logs in {files.folder})", flush=True)
    watcher = asyncio.create_task(keeper.watch())
    try:
        await assistant.run()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        listening.close()
        await listening.wait_closed()
        assistant.close()
        print("kiosk: stopped", flush=True)
