"""Running a scenario through the real pipeline and writing its outputs (docs/architecture.md §4),
for the CLI, `voice demo`, tests and benchmarks alike."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from voice.asr.partials import PartialDecoder
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo import WebRtcEchoCanceller
from voice.audio.wav import write_wav
from voice.components import (
    SpeechModels,
    context_budget,
    load_speech_models,
    make_engine,
    open_chat_model,
    telling_voices_apart,
)
from voice.config.llm import LlmConfig, resolve_llm_config
from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.conversation.session_log import SessionLog
from voice.engine.hold import Eagerness
from voice.engine.overlap import OverlapPhrases
from voice.errors import ConfigError
from voice.llm.port import ChatSettings, SizedChatModel
from voice.sim.driver import Pipeline, RoomSimulation, SimulationResult
from voice.sim.report import build_report
from voice.sim.scenario import RealLlm, Scenario
from voice.tools.mcp_settings import McpServerSettings
from voice.tools.toolbox import McpToolbox, say_on_stderr

OUTPUTS = ("report.json", "mic.wav", "speaker.wav", "session.jsonl", "events.jsonl")


def prepare_out_dir(out: Path, force: bool) -> None:
    """Create ``out``; an earlier run's files are only replaced when asked, so nothing recorded is lost."""
    existing = [name for name in OUTPUTS if (out / name).exists()]
    if existing and not force:
        raise ConfigError(f"{out} already holds {', '.join(existing)}; pass --force to replace them")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in existing:
            (out / name).unlink()
    except OSError as exc:
        raise ConfigError(f"cannot write to {out}: {exc.strerror}") from exc


def real_llm_config(llm: RealLlm) -> LlmConfig:
    return resolve_llm_config(llm.url, llm.model, None, os.environ if llm.url is None else {})


def run_scenario(
    scenario: Scenario,
    out: Path,
    *,
    realtime: bool = False,
    llm_config: LlmConfig | None = None,
    models: SpeechModels | None = None,
    mcp_servers: tuple[McpServerSettings, ...] = (),
    eagerness: Eagerness | None = None,
    overlap: OverlapPhrases | None = None,
    partials: PartialDecoder | None = None,
    speaker: str | None = None,
) -> dict[str, Any]:
    """Run ``scenario`` with the real components and write the four outputs into ``out``.

    The MCP servers the scenario names, and ``mcp_servers`` (the config's), answer the tool calls
    its script does not. ``eagerness`` (a flag) overrides the scenario's, which defaults to auto;
    the scenario's backchannels and stop phrases override ``overlap`` (the config's), else the defaults.
    With ``partials`` the user's words are also decoded as they speak (``input.partial`` events).
    ``speaker`` (the config's) says whose voice takes turns unless the scenario pins it; "conversation"
    needs ``models`` with a speaker encoder, loaded here when none are given.
    """
    eagerness = eagerness or scenario.eagerness or Eagerness.AUTO
    overlap = scenario.overlap or overlap
    speaker = scenario.speaker or speaker or "anyone"
    models = telling_voices_apart(models or load_speech_models(), speaker)
    with contextlib.ExitStack() as stack:
        toolbox = stack.enter_context(McpToolbox((*scenario.mcp_servers, *mcp_servers)))
        chat_model: SizedChatModel | None = None
        settings = ChatSettings()
        budget: ContextBudget | None = None
        if isinstance(scenario.llm, RealLlm):
            config = llm_config or real_llm_config(scenario.llm)
            chat_model = stack.enter_context(open_chat_model(config))
            settings = ChatSettings(temperature=0.0, max_tokens=scenario.llm.max_tokens)
            budget = context_budget(chat_model, settings, toolbox.specs)
        # Echo cancellation runs where the speaker reaches the mic; a room without echo is a headset.
        echo_canceller = WebRtcEchoCanceller() if scenario.room.echo_gain_db is not None else None
        pipeline = Pipeline(
            models.transcriber,
            models.synthesizer,
            lambda: make_engine(Conversation(budget), eagerness, overlap, speaker),
            echo_canceller,
            chat_model,
            settings,
            models.end_of_turn,
            toolbox if toolbox.specs else None,
            toolbox.specs,
            models.speaker_embed,
        )
        out.mkdir(parents=True, exist_ok=True)
        log = stack.enter_context(SessionLog.create(out / "session.jsonl"))
        simulation = RoomSimulation(scenario, pipeline, realtime=realtime, session_log=log, partials=partials)
        for line in toolbox.failures:
            say_on_stderr(line)
        simulation.say_failures(toolbox.failures)
        result = simulation.run()
    return write_outputs(result, out)


def write_outputs(result: SimulationResult, out: Path) -> dict[str, Any]:
    report = build_report(result.recorder, result.cues)
    (out / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    lines = (json.dumps(event, ensure_ascii=False) + "\n" for event in result.events)
    (out / "events.jsonl").write_text("".join(lines), encoding="utf-8")
    write_wav(out / "mic.wav", AudioBlock(result.mic, ENGINE_RATE))
    write_wav(out / "speaker.wav", AudioBlock(result.speaker, ENGINE_RATE))
    return report
