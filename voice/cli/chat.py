"""`voice chat`: talk with the assistant through the microphone and speaker; talk over it any time."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.asr.partial_whisper import preload_partials, whisper_partials
from voice.chat.driver import DeviceConversation, DeviceSettings, default_echo_canceller
from voice.chat.narrator import Narrator
from voice.chat.scenario_recording import ScenarioRecording, check_scenario_path
from voice.client_events import Failure
from voice.components import (
    context_budget,
    load_speech_models,
    make_engine,
    open_chat_model,
    open_wake_gate,
    telling_voices_apart,
)
from voice.config.flags import (
    add_device_arguments,
    add_speech_arguments,
    add_telemetry_arguments,
    add_turn_arguments,
    add_wake_arguments,
)
from voice.config.llm import add_llm_arguments
from voice.config.settings import add_config_argument, load_settings
from voice.conversation.session_log import open_session
from voice.llm.port import ChatSettings
from voice.recorder import Recorder
from voice.runtime import ChatModelThinker, Work
from voice.telemetry.attach import Telemetry
from voice.telemetry.http_endpoint import TelemetryEndpoint
from voice.telemetry.machine import this_cpu
from voice.telemetry.probes import probes_for
from voice.tools.toolbox import McpToolbox

if TYPE_CHECKING:
    from voice.chat.live import LiveChat

REPLY_TOKENS = 150  # a spoken answer; a small model left unbounded can talk for minutes


def register(subparsers: Any) -> None:
    chat = subparsers.add_parser("chat", help="talk with the assistant through your microphone and speaker")
    add_config_argument(chat)
    chat.add_argument("--session", type=Path, help="session log to append to (resumed if it exists)")
    chat.add_argument("--seconds", type=float, help="stop after this much audio (default: until Ctrl-C)")
    chat.add_argument(
        "--plain", action="store_true", help="plain lines, not the live view (always when not a terminal)"
    )
    chat.add_argument(
        "--record-scenario",
        type=Path,
        metavar="FILE",
        help="also write the conversation as a scenario FILE (.json) with your words as WAVs beside it, "
        "for `voice test`",
    )
    add_llm_arguments(chat)
    add_speech_arguments(chat)
    add_device_arguments(chat)
    add_turn_arguments(chat)
    add_wake_arguments(chat)
    add_telemetry_arguments(chat)
    chat.set_defaults(run=_chat)


def default_session_path() -> Path:
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "voice" / "sessions" / f"chat-{datetime.now():%Y%m%d-%H%M%S}.jsonl"


def _chat(args: argparse.Namespace) -> int:
    configured = load_settings(args, os.environ)
    live_view = not args.plain and sys.stdout.isatty()
    session_path: Path = args.session or default_session_path()
    if args.record_scenario is not None:
        check_scenario_path(args.record_scenario)
    cpu = this_cpu()
    print(f"cpu: {cpu.line()}", flush=True)  # speed and turn-taking depend on it (`voice doctor`)
    print("loading whisper and piper...", flush=True)
    wake = open_wake_gate(
        configured.wake_word, configured.awake_s
    )  # a wake server that is not there: said first
    models = telling_voices_apart(load_speech_models(configured.speech), configured.speaker)
    if live_view:
        trouble = preload_partials()  # the view shows your words as you say them from the start
        if trouble is not None:
            print(f"voice: {trouble}", file=sys.stderr, flush=True)
    settings = ChatSettings(max_tokens=REPLY_TOKENS)
    with contextlib.ExitStack() as stack:
        toolbox = stack.enter_context(McpToolbox(configured.mcp_servers))
        model = stack.enter_context(open_chat_model(configured.llm))
        log, conversation = open_session(session_path, context_budget(model, settings, toolbox.specs))
        stack.enter_context(log)
        work = Work(threaded=True)
        thinker = ChatModelThinker(model, settings, work, toolbox, toolbox.specs)
        engine = make_engine(conversation, configured.eagerness, configured.overlap, configured.speaker)
        live = _live_chat(args.seconds) if live_view else None
        talk = DeviceConversation(
            engine,
            models,
            thinker,
            work,
            default_echo_canceller() if configured.echo_cancel else None,
            DeviceSettings(configured.input_device, configured.output_device),
            log,
            say=None if live is None else live.say,
            input_levels=live is not None,
            partials=None if live is None else whisper_partials,
            wake=wake,
        )
        recording = None
        if args.record_scenario is not None:
            following = Recorder.following(talk.runner)
            recording = ScenarioRecording(
                args.record_scenario, following, configured.eagerness, talk.words_heard
            )
            talk.on_heard = recording.hear
            stack.callback(_write_scenario, recording)
        telemetry = Telemetry(
            configured.telemetry, configured.eagerness.value, *probes_for(configured, model), cpu=cpu
        )
        stack.callback(telemetry.close)
        telemetry.attach(talk, work)
        port = configured.telemetry.metrics_port
        if port is not None:
            stack.enter_context(TelemetryEndpoint(port, telemetry.metrics, telemetry.health))
            print(f"metrics: http://127.0.0.1:{port}/metrics (health at /healthz)", flush=True)
        # it goes on without a server that did not start, and says so
        failures = [Failure("tools", line, t=0.0) for line in toolbox.failures]
        if live is not None:
            try:
                last_log = live.run(talk, failures)
            finally:
                thinker.stop_all()
                work.close()
            print(f"voice chat: session log {last_log or session_path}", flush=True)
            return 0
        talk.runner.events.subscribe(Narrator())
        for failure in failures:
            talk.runner.events.publish(failure)

        async def main() -> None:
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, talk.stop)
            talk.open()  # a missing or busy device is said before "listening", not after
            print(f"listening (session log {session_path}); talk any time, Ctrl-C to stop", flush=True)
            if wake is not None:
                print(f'asleep: say "{wake.watch.detector.phrase}" to wake it', flush=True)
            await talk.run(args.seconds)

        try:
            asyncio.run(main())
        finally:
            thinker.stop_all()
            work.close()
    return 0


def _write_scenario(recording: ScenarioRecording) -> None:
    path = recording.write()
    print(f"voice chat: scenario {path} (your words in {recording.audio_dir}); replay it: voice test {path}")


def _live_chat(seconds: float | None) -> LiveChat:
    from voice.chat.live import LiveChat  # Textual loads only for the live view

    return LiveChat(seconds)
