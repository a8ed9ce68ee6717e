"""The rig of benchmarks/device_soak.py on a private PulseAudio null sink: the ``Script`` that plays the
user's WAVs into the sink as the stream says the assistant is ready for them, what it plays over each story
(``OverStory``), the scripted model that tells the story (``StoryModel``), the speakers it opens
(``Speakers``, ``HandedOut``), what the stream says of backchannels (``BackchannelWatch``), the television
and the held-out clips of full_duplex.py's cases it can play."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.playback import PlaybackBuffer
from voice.audio.wav import read_wav, write_wav
from voice.cancel import CancelToken
from voice.chat.driver import DeviceConversation, DeviceSettings, OpenOutput, device_openers
from voice.client_events import StateChanged, StreamEvent
from voice.conversation.items import AssistantText
from voice.duplex import AudioOutput
from voice.llm.port import ChatEvent, ChatRequest, Finished, TextDelta
from voice.recorder import RecordedTurn, Recorder
from voice.sim.room import reverberated, under

AUDIO = Path(__file__).resolve().parents[2] / "audio"
QUESTIONS = ("fox-story.wav", "what-weather.wav", "what-weekend.wav", "check-sunday.wav")
INTERRUPTIONS = ("sorry-sunday.wav", "wait-stop.wav", "what-wear.wav", "thanks-all.wav", "hello-there.wav")
STORY = (
    "Once upon a time, an old grey fox lived alone on a snowy hill above a quiet valley. "
    "Each winter night he sat outside his den, listened to the owls in the pine trees, and counted the "
    "stars one by one until the sky turned pale. There was a little river at the foot of the hill, and "
    "in the spring it grew loud and fast with melted snow. The fox liked to walk along its bank in the "
    "early morning, when the grass was wet and the birds were only starting to sing. One morning he met "
    "a young hare who had lost her way, and instead of chasing her, he showed her the path back to the "
    "meadow. From that day on the two of them met by the river every week, and they talked about the "
    "weather, the seasons, and the strange noises that came from the farm on the other side of the "
    "valley. When summer came, the fox finally went down to the village to see the farm for himself, "
    "and he found that the noises were only an old tractor that coughed every time it started."
)
SHORT = "Okay, I will stop there."
IDLE_BEFORE_NEXT_S = 1.5
USER_VOICE = 0  # full_duplex_cases.VOICES' first: the one user of a run with a television
READERS = {  # the television: a real reader of audio/real/
    "austen": tuple(f"austen_{n}" for n in (870, 880, 890, 920, 930)),
    "two_cities": tuple(f"two_cities-{n:02d}" for n in range(1, 17)),
}
STUCK_S = 150.0  # a story that never ends (the assistant keeps restarting it) must not stall the script
WORD_DELAY_S = 0.03


class HandedOut:
    """Every block handed to the speaker, on the speaker's clock (audio a device later silenced too)."""

    def __init__(self) -> None:
        self.blocks: list[AudioBlock] = []

    def played(self, block: AudioBlock) -> None:
        self.blocks.append(AudioBlock(block.samples.copy(), block.rate, block.start))

    def speaker(self, devices: DeviceSettings) -> OpenOutput:
        """The real speaker of ``devices``, telling this of every block it hands out too."""
        _, open_output = device_openers(devices)

        def opened(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
            def played(block: AudioBlock) -> None:
                self.played(block)
                on_played(block)

            return open_output(buffer, played)

        return opened

    def signal(self) -> Samples:
        end = max((block.end for block in self.blocks), default=0)
        out = np.zeros(end, dtype=np.float32)
        for block in self.blocks:
            out[block.start : block.end] = block.samples
        return out


class Speakers:
    """The speakers opened, to count how often their streams stopped while the conversation was idle."""

    def __init__(self) -> None:
        self.opened: list[AudioOutput] = []

    def opener(self, open_output: OpenOutput) -> OpenOutput:
        def opened(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
            speaker = open_output(buffer, on_played)
            self.opened.append(speaker)
            return speaker

        return opened

    @property
    def rests(self) -> int:
        return sum(getattr(speaker, "rests", 0) for speaker in self.opened)  # a tree before rests: 0


class StoryModel:
    """A ChatModel that tells STORY, or says SHORT when the user has just cut the previous reply off."""

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        cut = len(request.items) >= 2 and isinstance(request.items[-2], AssistantText)
        cut = cut and request.items[-2].interrupted  # type: ignore[union-attr]
        for word in (SHORT if cut else STORY).split(" "):
            if cancel.wait(WORD_DELAY_S):
                yield Finished("cancelled")
                return
            yield TextDelta(word + " ")
        yield Finished("stop")


@dataclass
class Played:
    """One user WAV played into the sink: where on the mic clock, and in which phase."""

    wav: str
    phase: str
    clock: int
    interruption: bool
    backchannel: bool = False


@dataclass(frozen=True)
class OverStory:
    """What is played over each story: in an ``interruptions`` stretch one cut-in ``after_s`` into it, in a
    ``backchannels`` one ``per_reply`` backchannels ``every_s`` apart from then on, and then the cut-in."""

    after_s: float
    backchannels: tuple[str, ...] = ()  # WAVs to take in turn; none: no backchannels stretch
    per_reply: int = 0
    every_s: float = 0.0
    openers: tuple[
        str, ...
    ] = ()  # cut-ins opening with a listener's word, every other one after backchannels

    @property
    def phases(self) -> tuple[str, ...]:
        """The kinds of stretch, in the order they take turns."""
        return ("quiet", "backchannels", "interruptions") if self.backchannels else ("quiet", "interruptions")


class BackchannelWatch:
    """From the stream: when each pause of a reply began and when it went on (None: it never did, the reply
    was cut), and how many ``input.backchannel`` events came (issue 36's; a tree without them sends none)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float | None]] = []
        self.backchannels = 0
        self._open = False  # paused, and neither gone on nor cut yet (transcribing keeps it open)

    def see(self, event: StreamEvent) -> None:
        if event.type == "input.backchannel":
            self.backchannels += 1
        elif isinstance(event, StateChanged) and event.state == "paused":
            self.pauses.append((event.t, None))
            self._open = True
        elif self._open and isinstance(event, StateChanged) and event.state == "speaking":
            self.pauses[-1] = (self.pauses[-1][0], event.t)
            self._open = False
        elif self._open and (event.type == "response.interrupted" or isinstance(event, StateChanged)):
            self._open = event.type == "state" and event.state in ("paused", "thinking")


@dataclass
class Script:
    """Plays the user's WAVs at the right moments, judged from the stream (recorded) between mic blocks."""

    talk: DeviceConversation
    recorder: Recorder
    soak_s: float
    stretch_s: float
    over: OverStory
    env: dict[str, str]
    limit_s: float
    paths: dict[str, Path] = field(default_factory=dict)  # a WAV not in audio/: where it is
    played: list[Played] = field(default_factory=list)
    began: float = field(default_factory=time.monotonic)
    idle_since: float | None = None
    last_play: float = 0.0
    interrupted_turn: int | None = None
    story_turn: int = 0  # the turn answering the last question (backchannels go over no other)
    player: subprocess.Popen[bytes] | None = None
    done: bool = False
    turn_clock: dict[int, int] = field(default_factory=dict)  # when each turn's request was sent
    # the engine stamps heard audio on the speaker's clock: how far it runs from the mic's, per turn
    output_ahead: dict[int, int] = field(default_factory=dict)
    reported: int = -1  # start sample of the last utterance printed as progress
    watch: BackchannelWatch = field(default_factory=BackchannelWatch)
    television: Path | None = None  # played from the first answer on, to the end
    television_player: subprocess.Popen[bytes] | None = None
    television_from: int | None = None  # its start on the mic clock
    questions: tuple[str, ...] = QUESTIONS  # what the user asks in the quiet, in turn
    interruptions: tuple[str, ...] = INTERRUPTIONS  # what the user cuts in with, in turn

    def play(self, wav: str, phase: str, interruption: bool, backchannel: bool = False) -> None:
        self.player = subprocess.Popen(["paplay", str(self.paths.get(wav, AUDIO / wav))], env=self.env)
        self.played.append(Played(wav, phase, self.talk.clock, interruption, backchannel))
        if not interruption and not backchannel:
            self.story_turn = turns_so_far(self.recorder) + 1
        self.last_play = time.monotonic()
        self.idle_since = None
        count = sum(p.interruption for p in self.played)
        print(f"  {time.monotonic() - self.began:6.1f}s {phase}: {wav} (turns {turns_so_far(self.recorder)},"
              f" interruptions {count})", file=sys.stderr, flush=True)  # fmt: skip

    def television_on(self) -> None:
        """The television comes on once the first question is answered (it must not be the one enrolled)."""
        if self.television is None or self.television_player is not None:
            return
        if any(turn.ended for turn in self.recorder.turns.values()):
            self.television_player = subprocess.Popen(["paplay", str(self.television)], env=self.env)
            self.television_from = self.talk.clock
            print(
                f"  {time.monotonic() - self.began:6.1f}s the television comes on",
                file=sys.stderr,
                flush=True,
            )

    def tick(self) -> None:
        self.television_on()
        now = time.monotonic()
        for turn in self.recorder.turns.values():
            self.turn_clock.setdefault(turn.turn, self.talk.clock)
            if turn.audio_start_s is not None and turn.turn not in self.output_ahead:
                self.output_ahead[turn.turn] = samples(turn.audio_start_s) - self.talk.clock
        for speech in self.recorder.speech:  # follow them by their start
            start = samples(speech.start_s)
            if start <= self.reported or speech.transcript is None or speech.end_s is None:
                continue
            self.reported = start
            at, voiced = speech.start_s, speech.end_s - speech.start_s
            counters = self.talk.device_counters()
            line = f"heard {speech.transcript!r} at {at:.2f}s, voiced {voiced:.2f}s; {counters}"
            print(f"  {now - self.began:6.1f}s {line}", file=sys.stderr, flush=True)
        if self.player is not None and self.player.poll() is None:
            return
        idle = self.talk.runner.state == "listening"
        self.idle_since = (self.idle_since or now) if idle else None
        rested = self.idle_since is not None and now - self.idle_since >= IDLE_BEFORE_NEXT_S
        stuck = now - self.last_play >= STUCK_S
        questions = sum(not p.interruption and not p.backchannel for p in self.played)
        phases = self.over.phases
        phase = phases[int((now - self.began) / self.stretch_s) % len(phases)]
        if now - self.began >= self.limit_s:
            self.done = True  # a runaway never rests: report what it did in the time given
            return
        if now - self.began >= self.soak_s:
            self.done = rested or stuck
            return
        if rested or stuck:
            self.play(self.questions[questions % len(self.questions)], phase, interruption=False)
            return
        latest = max(self.recorder.turns.values(), key=lambda t: t.turn, default=None)
        if (
            phase != "quiet"
            and latest is not None
            and not latest.ended
            and latest.turn != self.interrupted_turn
            and latest.turn in self.output_ahead
            and self.played[-1].phase == phase  # not a quiet stretch's story still playing
            and not self.played[-1].interruption
            and (phase != "backchannels" or latest.turn == self.story_turn)  # not "Okay, I will stop"
        ):
            self.over_story(latest.turn, latest.audio_start_s, phase)

    def over_story(self, turn: int, audio_start_s: float | None, phase: str) -> None:
        """Over the story of ``turn``: each backchannel when it is due, then the cut-in."""
        story_s = (self.talk.clock - mic_clock(self, turn, audio_start_s)) / ENGINE_RATE
        said = 0
        for play in reversed(self.played):
            if not play.backchannel:
                break
            said += 1
        since_s = (self.talk.clock - self.played[-1].clock) / ENGINE_RATE
        due = story_s >= self.over.after_s if not said else since_s >= self.over.every_s
        if not due:
            return
        if phase == "backchannels" and said < self.over.per_reply:
            count = sum(p.backchannel for p in self.played)
            wav = self.over.backchannels[count % len(self.over.backchannels)]
            self.play(wav, phase, interruption=False, backchannel=True)
            return
        self.interrupted_turn = turn
        count = sum(p.interruption for p in self.played)
        after_backchannels = sum(p.interruption and p.phase == "backchannels" for p in self.played)
        if phase == "backchannels" and self.over.openers and after_backchannels % 2:
            opener = self.over.openers[after_backchannels // 2 % len(self.over.openers)]
            self.play(opener, phase, interruption=True)
            return
        self.play(self.interruptions[count % len(self.interruptions)], phase, interruption=True)


def samples(seconds: float) -> int:
    return round(seconds * ENGINE_RATE)


def mic_clock(script: Script, turn: int, output_s: float | None) -> int:
    """An output-clock time of ``turn`` placed on the mic's clock (to the block it was first seen)."""
    return samples(output_s or 0.0) - script.output_ahead.get(turn, 0)


def cut_at(script: Script, turn: RecordedTurn) -> int:
    """When the speech that cut ``turn`` began, on the mic clock: its barge-in (already on that clock), or
    for a turn cut with none, its audio's end moved over from the speaker's clock (which underflows move)."""
    if turn.barge_in_s is not None:
        return samples(turn.barge_in_s)
    return mic_clock(script, turn.turn, turn.audio_end_s)


def turns_so_far(recorder: Recorder) -> int:
    """Requests made so far (turns count from 1)."""
    return max(recorder.turns, default=0)


def television(folder: Path, under_db: float, seconds: float, question: Path, reader: str = "austen") -> Path:
    """A WAV of a television talking on for ``seconds``, ``under_db`` under ``question``'s speech level."""
    clips = [read_wav(AUDIO / "real" / f"{name}.wav").samples for name in READERS[reader]]
    reading = np.concatenate(clips)
    reading = np.tile(reading, int(seconds * ENGINE_RATE // len(reading)) + 1)
    path = folder / "television.wav"
    level_of = read_wav(question).samples
    write_wav(path, AudioBlock(under(reverberated(reading), level_of, under_db), ENGINE_RATE))
    return path


def one_user(
    folder: Path, voice: int = USER_VOICE
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...], tuple[str, ...]]:
    """Questions and cut-ins all said by one held-out espeak-ng voice of full_duplex.py's cases, as manifest
    entries, the questions and the cut-ins: where only the conversation's speaker takes turns, the fixtures'
    five voices (one of them the assistant's own, piper's joe) would be five people, not one user."""
    from dataclasses import asdict

    from cases import full_duplex_cases as cases

    (folder / "user").mkdir(parents=True, exist_ok=True)
    clips = cases.Clips(folder / "user")
    asked = [clips.espeak(voice, text) for text in cases.QUESTIONS]
    cut_ins = [clips.espeak(voice, text) for text in cases.CUT_INS]
    entries = {
        f"{clip.name}.wav": asdict(clip)
        | {"file": f"{clip.name}.wav", "path": str(folder / "user" / f"{clip.name}.wav")}
        for clip in asked + cut_ins
    }
    return entries, tuple(f"{clip.name}.wav" for clip in asked), tuple(f"{clip.name}.wav" for clip in cut_ins)


def case_clips(category: str, role: str) -> dict[str, dict[str, Any]]:
    """The clips of benchmarks/full_duplex.py's cases (held-out voices) of ``category`` said in ``role``, as
    manifest entries."""
    from cases.full_duplex_cases import ensure_cases  # only these modes need espeak-ng (and the cases' cache)

    folder = ensure_cases()
    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
    clips = json.loads((folder / "clips.json").read_text(encoding="utf-8"))
    names = [
        cue["clip"]
        for case in cases
        if case["category"] == category
        for cue in case["cues"]
        if cue["role"] == role
    ]
    return {
        f"{name}.wav": clips[name] | {"file": f"{name}.wav", "path": str(folder / "clips" / f"{name}.wav")}
        for name in names
    }
