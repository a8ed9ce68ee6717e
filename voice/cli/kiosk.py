"""`voice kiosk`: the assistant headless, its page and event API on one port (docs/architecture.md §7, §8)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from voice.asr.partial_whisper import preload_partials
from voice.chat.driver import DeviceSettings
from voice.cli.chat import REPLY_TOKENS
from voice.components import context_budget, open_chat_model, open_wake_gate
from voice.config.flags import (
    add_device_arguments,
    add_kiosk_arguments,
    add_speech_arguments,
    add_turn_arguments,
    add_wake_arguments,
)
from voice.config.llm import LlmConfig, add_llm_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.conversation.continuation import Conversation
from voice.engine.hold import Eagerness
from voice.engine.overlap import OverlapPhrases
from voice.errors import ConfigError
from voice.kiosk.assistant import KioskAssistant
from voice.kiosk.audio import AudioSetup, audio_setup
from voice.kiosk.keeper import KeeperSettings, SessionKeeper
from voice.kiosk.security import check_bind
from voice.kiosk.server import KioskServer, ServerSettings
from voice.kiosk.sessions import SessionFiles
from voice.llm.port import ChatSettings, SizedChatModel
from voice.telemetry.attach import Telemetry
from voice.telemetry.machine import this_cpu
from voice.telemetry.probes import probes_for
from voice.tools.toolbox import McpToolbox, say_on_stderr
from voice.waking import WakeWordGate


def register(subparsers: Any) -> None:
    kiosk = subparsers.add_parser(
        "kiosk", help="run headless for visitors: the page at / and the event API at /ws on one port"
    )
    add_config_argument(kiosk)
    add_kiosk_arguments(kiosk)
    add_device_arguments(kiosk)
    add_speech_arguments(kiosk)
    add_turn_arguments(kiosk)
    add_wake_arguments(kiosk)
    add_llm_arguments(kiosk)
    kiosk.set_defaults(run=_kiosk)


def _kiosk(args: argparse.Namespace) -> int:
    configured = load_settings(args, os.environ)
    kiosk = configured.kiosk
    check_bind(kiosk.host, kiosk.token)
    if kiosk.wake is not None and configured.wake_word is not None:
        raise ConfigError("kiosk.wake (a phrase whisper hears) and wake.word (a wake word model): set one")
    files = SessionFiles(kiosk.sessions, kiosk.keep_sessions)
    cpu = this_cpu()
    print(f"cpu: {cpu.line()}", flush=True)  # speed and turn-taking depend on it (`voice doctor`)
    wake = open_wake_gate(
        configured.wake_word, configured.awake_s
    )  # a wake server that is not there: said first
    if kiosk.audio != "none":
        print("loading whisper and piper...", flush=True)
        trouble = preload_partials()  # the page asks for the words as they are said as soon as it opens
        if trouble is not None:
            print(f"voice kiosk: {trouble}", file=sys.stderr, flush=True)
    devices = DeviceSettings(configured.input_device, configured.output_device)
    audio = audio_setup(
        kiosk.audio,
        devices,
        configured.echo_cancel,
        configured.speech,
        configured.speaker,
    )
    server = ServerSettings(kiosk.host, kiosk.port, kiosk.token, kiosk.allow_origins)
    keeper = KeeperSettings(kiosk.fresh_after_s, kiosk.wake)
    with McpToolbox(configured.mcp_servers) as toolbox, open_chat_model(configured.llm) as model:
        for line in toolbox.failures:
            say_on_stderr(line)
        telemetry = Telemetry(
            configured.telemetry,
            configured.eagerness.value,
            *probes_for(configured, model),
            cpu=cpu,
        )
        try:
            asyncio.run(
                _serve(
                    model,
                    configured.llm,
                    audio,
                    files,
                    server,
                    keeper,
                    toolbox,
                    configured.eagerness,
                    configured.overlap,
                    telemetry,
                    wake,
                )
            )
        finally:
            telemetry.close()
    return 0


async def _serve(
    model: SizedChatModel,
    config: LlmConfig,
    audio: AudioSetup,
    files: SessionFiles,
    server_settings: ServerSettings,
    keeper_settings: KeeperSettings,
    toolbox: McpToolbox,
    eagerness: Eagerness,
    overlap: OverlapPhrases,
    telemetry: Telemetry,
    wake: WakeWordGate | None,
) -> None:
    settings = ChatSettings(max_tokens=REPLY_TOKENS)
    public = {
        "audio": audio.mode,
        "wake": keeper_settings.wake if wake is None else wake.watch.detector.phrase,
        "fresh_after_s": keeper_settings.fresh_after_s,
        "llm": "embedded" if config.embedded else config.model,
        "token_required": server_settings.token is not None,
    }
    keeper = SessionKeeper(keeper_settings, files, public)
    conversation = Conversation(context_budget(model, settings, toolbox.specs))
    assistant = KioskAssistant(
        model,
        settings,
        audio,
        conversation,
        files.create(),
        keeper.gate,
        toolbox=toolbox,
        eagerness=eagerness,
        overlap=overlap,
        wake=wake,
    )
    assistant.attach(telemetry)
    server = KioskServer(keeper, server_settings, audio.browser, telemetry.metrics, telemetry.health)
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
