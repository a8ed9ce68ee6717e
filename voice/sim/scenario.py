"""Scenario files (docs/architecture.md §4): who says what when, what the LLM answers, the room."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from voice.asr.transcript_words import phrase_key
from voice.engine.hold import Eagerness, parse_eagerness
from voice.engine.overlap import DEFAULT_BACKCHANNELS, DEFAULT_STOP_PHRASES, OverlapPhrases, correcting_word
from voice.engine.speaker_check import SPEAKERS
from voice.errors import ConfigError
from voice.llm.errors import ErrorCode
from voice.sim.expectations import Expectation, parse_expectations
from voice.tools.mcp_settings import McpServerSettings, parse_mcp_servers
from voice.wake.models import check_wake_word

SCENARIO_VERSION = 1


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer; with ``fail`` (an LLM error code) it fails ``fail_after_ms`` after its text."""

    text: str
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    fail: ErrorCode | None = None
    fail_after_ms: float = 0.0


@dataclass(frozen=True)
class ScriptedTool:
    """A tool's scripted result, delivered ``ms`` of virtual time after the call starts."""

    result: str
    ms: float = 0.0


@dataclass(frozen=True)
class ScriptedLlm:
    """Replies, one per request in order, streamed word by word after virtual-time delays."""

    replies: tuple[ScriptedReply, ...]
    tools: dict[str, ScriptedTool] = field(default_factory=dict)
    first_delta_ms: float = 300.0
    delta_ms: float = 40.0


@dataclass(frozen=True)
class RealLlm:
    """A real model: an OpenAI-compatible URL, or the embedded llama.cpp server when ``url`` is None;
    ``from_config``: the LLM the user's config (or its environment variables) names."""

    url: str | None = None
    model: str | None = None
    max_tokens: int = 60
    from_config: bool = False


@dataclass(frozen=True)
class Noise:
    wav: Path
    gain_db: float


@dataclass(frozen=True)
class Room:
    """Echo, noise, and the mic's clock against the speaker's: drift, and input the mic drops now and then."""

    echo_gain_db: float | None = None
    echo_delay_ms: float = 40.0
    noise: Noise | None = None
    drift_ppm: float = 0.0
    dropped_every_s: float | None = None
    dropped_ms: float = 0.0


@dataclass(frozen=True)
class UserCue:
    """User audio (or typed ``text``) at ``at_s``, or ``after_ms`` after reply ``during_reply`` began."""

    wav: Path | None
    at_s: float | None = None
    during_reply: int | None = None
    after_ms: float = 0.0
    text: str | None = None
    input_id: str | None = None


@dataclass(frozen=True)
class Scenario:
    path: Path
    llm: ScriptedLlm | RealLlm
    user: tuple[UserCue, ...]
    end_s: float
    room: Room = Room()
    mcp_servers: tuple[McpServerSettings, ...] = ()
    eagerness: Eagerness | None = None  # ``"turn": {"eagerness": ...}`` pins it; None: the config's
    # ``"turn": {"backchannels": [...], "stop_phrases": [...]}`` pins them (a list left out: the default);
    # None: the config's
    overlap: OverlapPhrases | None = None
    expectations: tuple[Expectation, ...] = ()  # ``"expect": [...]``: what must hold after a run
    speaker: str | None = None  # ``"turn": {"speaker": "conversation"}`` pins it; None: the config's
    wake: WakeSetting | None = None  # ``"wake": {"word": "okay_nabu", "awake_s": 10}``: asleep until it


@dataclass(frozen=True)
class WakeSetting:
    """A scenario's wake word (a bundled name or a model's .json beside the scenario) and quiet time."""

    word: str
    awake_s: float = 10.0


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; any problem is one ConfigError line naming the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read scenario {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"scenario {path} is not valid JSON: {exc}") from exc
    try:
        return _parse(path, data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"scenario {path}: {_describe(exc)}") from exc


def _describe(exc: Exception) -> str:
    return f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)


def _parse(path: Path, data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise TypeError("the top level must be an object")
    if data.get("version") != SCENARIO_VERSION:
        raise ValueError(f"version must be {SCENARIO_VERSION}, got {data.get('version')!r}")
    base = path.parent
    end_s = float(data["end_s"])
    if end_s <= 0:
        raise ValueError("end_s must be positive")
    user = tuple(_cue(base, i, cue) for i, cue in enumerate(data["user"], start=1))
    room = _room(base, data.get("room"))
    llm, mcp = _llm(base, data["llm"]), _mcp(path, data.get("mcp"))
    turn = data.get("turn")
    expectations = parse_expectations(data.get("expect"))
    wake = _wake(base, data.get("wake"))
    eagerness, overlap, speaker = _eagerness(turn), _overlap(turn), _speaker(turn)
    return Scenario(path, llm, user, end_s, room, mcp, eagerness, overlap, expectations, speaker, wake)


def _wake(base: Path, data: Any) -> WakeSetting | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - {"word", "awake_s"}:
        raise ValueError('"wake" must be an object with "word" and, if wanted, "awake_s"')
    word = data["word"]
    if not isinstance(word, str) or not word.strip():
        raise ValueError('"wake"."word" must be a wake word\'s name or a model\'s .json')
    if "/" in word or word.endswith(".json"):
        word = str(base / word)
    awake_s = data.get("awake_s", 10.0)
    if isinstance(awake_s, bool) or not isinstance(awake_s, int | float) or awake_s <= 0:
        raise ValueError('"wake"."awake_s" must be a number of seconds above 0')
    try:
        check_wake_word(word)
    except ConfigError as exc:
        raise ValueError(f'"wake": {exc}') from exc
    return WakeSetting(word, float(awake_s))


_TURN_KEYS = {"eagerness", "backchannels", "stop_phrases", "speaker"}


def _eagerness(data: Any) -> Eagerness | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - _TURN_KEYS:
        raise TypeError(f"turn must be an object with only {', '.join(sorted(_TURN_KEYS))}")
    return None if data.get("eagerness") is None else parse_eagerness(data["eagerness"])


def _speaker(data: Any) -> str | None:
    """Whose voice takes turns, if the scenario says (``turn`` is checked): "conversation" or "anyone"."""
    speaker = None if data is None else data.get("speaker")
    if speaker is not None and speaker not in SPEAKERS:
        raise ValueError(f"turn.speaker must be one of {', '.join(SPEAKERS)}, not {speaker!r}")
    return speaker


def _overlap(data: Any) -> OverlapPhrases | None:
    """The scenario's backchannels and stop phrases, if it names either list (``turn`` is checked)."""
    if data is None or not {"backchannels", "stop_phrases"} & set(data):
        return None
    backchannels = _phrases(data, "backchannels", DEFAULT_BACKCHANNELS)
    correcting = next(filter(None, map(correcting_word, backchannels)), None)
    if correcting is not None:
        raise TypeError(f"turn.backchannels must not hold {correcting!r}: it disagrees or corrects")
    stop_phrases = _phrases(data, "stop_phrases", DEFAULT_STOP_PHRASES)
    return OverlapPhrases(backchannels, stop_phrases)


def _phrases(data: dict[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    listed = data.get(key, list(default))
    if not isinstance(listed, list) or not all(isinstance(p, str) and phrase_key(p) for p in listed):
        raise TypeError(f"turn.{key} must be a list of phrases with words in them")
    return tuple(listed)


def _mcp(path: Path, data: Any) -> tuple[McpServerSettings, ...]:
    """The scenario's own MCP servers (``"mcp": {"servers": {...}}``, the config file's shape).

    A command is run as the scenario says, except that ``python`` is the interpreter running voice and
    a part starting ``./`` or ``../`` is a path from the scenario's folder, so a scenario runs anywhere.
    """
    if data is None:
        return ()
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise TypeError('mcp must be an object with a "servers" object')
    servers = parse_mcp_servers(data["servers"], str(path))
    return tuple(_located(server, path.parent) for server in servers)


def _located(server: McpServerSettings, base: Path) -> McpServerSettings:
    if server.command is None:
        return server
    program, *args = server.command
    program = sys.executable if program in {"python", "python3"} else program
    args = [str((base / arg).resolve()) if arg.startswith(("./", "../")) else arg for arg in args]
    return replace(server, command=(program, *args))


def _wav(base: Path, name: Any) -> Path:
    if not isinstance(name, str):
        raise TypeError("a wav must be a path string")
    wav = (base / name).resolve()
    if not wav.is_file():
        raise ValueError(f"no such wav file {name!r} (looked at {wav})")
    return wav


def _llm(base: Path, data: Any) -> ScriptedLlm | RealLlm:
    if not isinstance(data, dict):
        raise TypeError("llm must be an object")
    if "replies" in data:
        replies = tuple(_reply(r) for r in data["replies"])
        tools = {str(k): _tool(v) for k, v in data.get("tools", {}).items()}
        return ScriptedLlm(
            replies, tools, float(data.get("first_delta_ms", 300)), float(data.get("delta_ms", 40))
        )
    if data.get("embedded") is True or "url" in data:
        return RealLlm(data.get("url"), data.get("model"), int(data.get("max_tokens", 60)))
    if data.get("config") is True:
        return RealLlm(max_tokens=int(data.get("max_tokens", 60)), from_config=True)
    raise ValueError('llm needs "replies", "url", "config": true or "embedded": true')


def _reply(data: Any) -> ScriptedReply:
    if isinstance(data, str):
        return ScriptedReply(data)
    if not isinstance(data, dict):
        raise TypeError("a reply must be a string or an object with text and tool_calls")
    calls = tuple(
        ScriptedToolCall(str(call["name"]), dict(call.get("arguments", {})))
        for call in data.get("tool_calls", [])
    )
    fail = data.get("fail")
    return ScriptedReply(
        str(data.get("text", "")),
        calls,
        None if fail is None else _error_code(fail),
        float(data.get("after_ms", 0)),
    )


def _error_code(name: Any) -> ErrorCode:
    try:
        return ErrorCode(str(name).replace("-", "_"))
    except ValueError:
        known = ", ".join(code.value for code in ErrorCode)
        raise ValueError(f"unknown fail code {name!r} (one of {known})") from None


def _tool(data: Any) -> ScriptedTool:
    if isinstance(data, str):
        return ScriptedTool(data)
    if not isinstance(data, dict):
        raise TypeError("a tool must be a result string or an object with result and ms")
    ms = float(data.get("ms", 0))
    if ms < 0:
        raise ValueError("a tool's ms must not be negative")
    return ScriptedTool(str(data["result"]), ms)


def _room(base: Path, data: Any) -> Room:
    if data is None:
        return Room()
    if not isinstance(data, dict):
        raise TypeError("room must be an object")
    noise = data.get("noise")
    dropped = data.get("dropped_blocks")
    return Room(
        None if data.get("echo_gain_db") is None else float(data["echo_gain_db"]),
        float(data.get("echo_delay_ms", 40)),
        None if noise is None else Noise(_wav(base, noise["wav"]), float(noise.get("gain_db", -30))),
        float(data.get("drift_ppm", 0)),
        None if dropped is None else float(dropped["every_s"]),
        0.0 if dropped is None else float(dropped["ms"]),
    )


def _cue(base: Path, index: int, data: Any) -> UserCue:
    if not isinstance(data, dict):
        raise TypeError(f"user entry {index} must be an object")
    if "text" in data:
        wav, text = None, data["text"]
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"user entry {index}: text must be a non-empty string")
        input_id = None if data.get("id") is None else str(data["id"])
    else:
        wav, text, input_id = _wav(base, data["wav"]), None, None
    if "at_s" in data:
        return UserCue(wav, at_s=float(data["at_s"]), text=text, input_id=input_id)
    if "during_reply" in data:
        reply = int(data["during_reply"])
        if reply < 1:
            raise ValueError(f"user entry {index}: during_reply counts from 1")
        after_ms = float(data.get("after_ms", 0))
        return UserCue(wav, during_reply=reply, after_ms=after_ms, text=text, input_id=input_id)
    raise ValueError(f"user entry {index} needs at_s or during_reply")
