"""`voice chat --record-scenario FILE`: a live conversation written as a scenario (docs/architecture.md §4),
so one that went wrong becomes a test `voice test` replays.

What the user said is kept as ASR heard it, one WAV per utterance: the mic with the echo subtracted
linearly, over a reply from where the user's voice began, up to a second before the VAD's late onset
under AEC3 (voice/audio/asr_signal.py); without an echo canceller, the mic as the engine heard it. The
replay plays them in a room without echo, so the pipeline hears the words it heard live. The
replies become scripted replies, each utterance a cue placed where it was said: before any reply
played, at its time; after, that many ms after the latest reply began to play (LLM latency differs
between the live model and the script, and a cut-in belongs to the reply it cut). The ``expect`` list
states how each reply ended live; edit the one that went wrong to say what should have happened.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import write_wav
from voice.conversation.items import ToolCall, ToolResult
from voice.engine.hold import Eagerness
from voice.errors import ConfigError
from voice.llm.errors import ErrorCode
from voice.recorder import RecordedSpeech, RecordedTurn, Recorder

PRE_S = 0.3  # audio kept before the speech began: the VAD needs the onset, whisper the first consonant
POST_S = 0.4  # and after it stopped
KEEP_S = 120.0  # the longest utterance a clip holds in full
TAIL_S = 3.0  # the replay runs this long past the last thing that happened


@dataclass(frozen=True)
class Clip:
    """One utterance's audio: its file name and where it began on the session's clock (seconds)."""

    wav: str
    start_s: float


def check_scenario_path(path: Path) -> None:
    """A scenario file `--record-scenario` can write, said before anything loads."""
    if path.suffix != ".json":
        raise ConfigError(f"--record-scenario {path}: a scenario file ends in .json")
    if not path.parent.is_dir():
        raise ConfigError(f"--record-scenario {path}: no such folder {path.parent}")


class ScenarioRecording:
    """Follows a conversation through ``recorder`` (its stream and log) and the blocks the engine heard
    (``hear``); `voice chat` hands in ``Recorder.following(runner)``."""

    def __init__(
        self,
        path: Path,
        recorder: Recorder,
        eagerness: Eagerness,
        words_heard: Callable[[int, int], AudioBlock | None] | None = None,
    ) -> None:
        """``words_heard(onset, end)``: what ASR heard of the utterance whose voice began at ``onset``, up to
        ``end``, where that is not the engine's audio (DeviceConversation's)."""
        self.path = path
        self._words_heard = words_heard
        self.audio_dir = path.with_name(f"{path.stem}-audio")
        self._eagerness = eagerness
        self._recorder = recorder
        self._blocks: deque[AudioBlock] = deque()
        self._clips: list[Clip] = []
        self._clip_samples: list[np.ndarray] = []
        self._clock = 0
        check_scenario_path(path)

    def hear(self, block: AudioBlock) -> None:
        """A block as the engine heard it: kept while an utterance may still need it."""
        self._blocks.append(block)
        self._clock = block.end
        while self._blocks and self._blocks[0].end < self._clock - KEEP_S * ENGINE_RATE:
            self._blocks.popleft()
        for speech in self._recorder.speech[len(self._clips) :]:
            if speech.end_s is None or self._clock < (speech.end_s + POST_S) * ENGINE_RATE:
                break
            self._cut(speech)

    def _cut(self, speech: RecordedSpeech) -> None:
        start = max(0, round((speech.start_s - PRE_S) * ENGINE_RATE))
        end = self._clock if speech.end_s is None else round((speech.end_s + POST_S) * ENGINE_RATE)
        heard = self._asr_heard(round(speech.start_s * ENGINE_RATE), end) or self._engine_heard(start, end)
        # never from before the reply the voice began over (the pre-roll or ASR's reach back can begin
        # sooner): the cue belongs to that reply
        played = [t.audio_start_s for t in self._recorder.turns.values() if t.audio_start_s is not None]
        reply_from = max((s for s in played if s <= speech.start_s), default=0.0)
        skip = min(heard.frames, max(0, round(reply_from * ENGINE_RATE) - heard.start))
        self._clips.append(Clip(f"utterance-{len(self._clips) + 1}.wav", (heard.start + skip) / ENGINE_RATE))
        self._clip_samples.append(heard.samples[skip:].astype(np.float32))

    def _engine_heard(self, start: int, end: int) -> AudioBlock:
        """The blocks the engine heard over [``start``, ``end``), as far as they are kept."""
        pieces = [
            block.samples[max(0, start - block.start) : max(0, end - block.start)]
            for block in self._blocks
            if block.end > start and block.start < end
        ]
        first = next((b.start for b in self._blocks if b.end > start), start)
        samples = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
        return AudioBlock(samples.astype(np.float32), ENGINE_RATE, max(start, first))

    def _asr_heard(self, onset: int, end: int) -> AudioBlock | None:
        """The utterance as ASR heard it, if that is not the engine's audio: from where ASR began it."""
        heard = None if self._words_heard is None else self._words_heard(onset, end)
        return None if heard is None or heard.frames == 0 else heard

    def write(self) -> Path:
        """Write the WAVs and the scenario (any utterance still open is cut where the audio ends)."""
        for speech in self._recorder.speech[len(self._clips) :]:
            self._cut(speech)
        try:
            self.audio_dir.mkdir(parents=True, exist_ok=True)
            for clip, samples in zip(self._clips, self._clip_samples, strict=True):
                write_wav(self.audio_dir / clip.wav, AudioBlock(samples, ENGINE_RATE))
            self.path.write_text(scenario_text(self.scenario()), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write the scenario {self.path}: {exc.strerror}") from exc
        return self.path

    def scenario(self) -> dict[str, Any]:
        turns = self._recorder.answered()
        cues = [self._cue(clip, turns) for clip in self._clips]
        times = [self._clock / ENGINE_RATE, *(t.audio_end_s or 0.0 for t in turns)]
        return {
            "version": 1,
            "llm": scripted_llm(turns),
            "user": cues,
            "end_s": round(max(times) + TAIL_S, 2),
            "turn": {"eagerness": self._eagerness.value},
            "expect": self._expectations(turns),
        }

    def _cue(self, clip: Clip, turns: list[RecordedTurn]) -> dict[str, Any]:
        wav = f"{self.audio_dir.name}/{clip.wav}"
        played = [t.audio_start_s for t in turns if t.audio_start_s is not None]
        before = [start for start in played if start <= clip.start_s]
        if not before:
            return {"wav": wav, "at_s": round(clip.start_s, 3)}
        return {
            "wav": wav,
            "during_reply": len(before),
            "after_ms": round((clip.start_s - before[-1]) * 1000),
        }

    def _expectations(self, turns: list[RecordedTurn]) -> list[dict[str, Any]]:
        """How each reply ended live: played in full, or cut (by the utterance that began its barge-in)."""
        expect: list[dict[str, Any]] = []
        starts = [speech.start_s for speech in self._recorder.speech]
        for number, turn in enumerate(turns, start=1):
            if turn.error is not None:
                continue
            if turn.interrupted:
                cut: dict[str, Any] = {"cut": number}
                if turn.barge_in_s is not None and turn.barge_in_s in starts:
                    cut["by"] = starts.index(turn.barge_in_s) + 1
                expect.append(cut)
                if turn.spoken:
                    expect.append({"heard_prefix": number, "within_words": 1})
                if number < len(turns):  # the next request carries what was heard, or the input merged
                    carries = "interrupted" if turn.spoken else "merged"
                    expect.append({"request": number + 1, "carries": carries})
            elif turn.done:
                expect.append({"completed": number})
        return expect


def scripted_llm(turns: list[RecordedTurn]) -> dict[str, Any]:
    """The replies as generated, with the tool calls each proposed and the results the tools gave."""
    calls: dict[str, ToolCall] = {}
    results: dict[str, str] = {}
    for turn in turns:
        for item in turn.request:
            if isinstance(item, ToolCall):
                calls.setdefault(item.id, item)
            elif isinstance(item, ToolResult) and not item.failed:
                results.setdefault(item.id, item.output)
    ordered = list(calls.values())
    replies: list[Any] = []
    tools: dict[str, str] = {}
    for turn in turns:
        proposed, ordered = ordered[: len(turn.tool_calls)], ordered[len(turn.tool_calls) :]
        reply: dict[str, Any] = {"text": turn.reply}
        if proposed:
            reply["tool_calls"] = [{"name": call.name, "arguments": call.arguments} for call in proposed]
            tools.update({call.name: results[call.id] for call in proposed if call.id in results})
        if turn.error is not None:
            known = {code.value for code in ErrorCode}
            reply["fail"] = turn.error if turn.error in known else ErrorCode.UNAVAILABLE.value
        replies.append(reply["text"] if set(reply) == {"text"} else reply)
    return {"replies": replies} | ({"tools": tools} if tools else {})


def scenario_text(scenario: dict[str, Any]) -> str:
    """The scenario as JSON a person edits: indented, one expectation a line."""
    body = {key: value for key, value in scenario.items() if key != "expect"}
    text = json.dumps(body, indent=2, ensure_ascii=False).removesuffix("\n}")
    lines = ",\n".join(f"    {json.dumps(entry, ensure_ascii=False)}" for entry in scenario.get("expect", []))
    return f'{text},\n  "expect": [\n{lines}\n  ]\n}}\n'
