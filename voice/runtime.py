"""What every driver shares: carrying out the engine's actions and reporting playback back to it.

A driver owns the clock (a virtual room or real devices); this runner owns everything between the
engine and the heavy components: ASR, the end-of-turn model and TTS in worker threads (or inline, for
deterministic runs), the LLM, tools, the playback buffer, and the session log.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from voice.asr.partials import LivePartials, PartialDecoder
from voice.asr.port import Transcriber
from voice.audio.block import AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.cancel import DISCARDED, DROPPED, INTERRUPTED, CancelToken
from voice.client_events import NoticeSpoken
from voice.conversation.continuation import Conversation, Request
from voice.conversation.items import Item, ToolCall, ToolResult
from voice.conversation.log_records import LogRecord
from voice.conversation.session_log import SessionLog
from voice.engine.actions import (
    CancelTurn,
    DropTranscription,
    EngineAction,
    JudgeSpeaker,
    JudgeTurnEnd,
    KeepVoice,
    PausePlayback,
    Play,
    ResumePlayback,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Synthesize,
    Transcribe,
)
from voice.engine.engine import Engine
from voice.engine.inputs import (
    AudioPlayed,
    EndConversation,
    EngineInput,
    FailedOutsideReply,
    LlmFailed,
    MicAudio,
    SpeakerJudged,
    SynthesisFailed,
    SynthesisReady,
    ToolDone,
    TranscriptFailed,
    TranscriptReady,
    TurnEndJudged,
)
from voice.engine.llm_bridge import stream_turn
from voice.event_stream import EventStream
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.port import ChatModel, ChatSettings, ToolSpec
from voice.remote.errors import SpeechServerError
from voice.speaker.voiceprint import Embed, Voiceprint
from voice.speaker.weights import Tensor
from voice.tts.port import Synthesizer
from voice.turn_end.port import EndOfTurn

FailureHandler = Callable[[Exception], Iterable[EngineInput]]
# Work on the path of a turn's end or a reply: live partials never decode while any of it is asked for.
TURN_PATH_WORK = ("asr", "turn-end", "tts")
LogListener = Callable[[LogRecord], None]
KEPT_VOICES = 16  # embeddings of judged stretches kept for KeepVoice, at most


class Clock(Protocol):
    """Sample-clock time for work that waits (a scripted model between words, a retry's delay).

    ``start`` runs a job that may wait on it; ``sleep_until`` is False if ``cancel`` fired first.
    """

    rate: int

    @property
    def now(self) -> int: ...

    def start(self, job: Callable[[], None]) -> None: ...

    def sleep_until(self, sample: int, cancel: CancelToken) -> bool: ...


class WorkWatcher(Protocol):
    """Told of each event heavy work produced, with the seconds since that work was asked for (telemetry)."""

    def produced(self, kind: str, event: EngineInput, seconds: float) -> None: ...


class Work:
    """Runs heavy work inline (deterministic) or on one worker thread per kind (real time).

    Results come back through ``inbox`` in the order each kind produced them. Work that raises never
    vanishes: its ``failed`` mapping turns the exception into the events the engine waits for. Work
    that ``waits`` on ``clock`` runs through the clock when deterministic (inline, it would block).
    ``watchers`` hear of every result as it is produced, on the thread that produced it: the one
    place work is timed. ``busy`` says whether work of a kind is asked for and not yet done.
    """

    def __init__(self, threaded: bool, clock: Clock | None = None) -> None:
        self.threaded = threaded
        self.clock = clock
        self.inbox: queue.SimpleQueue[EngineInput] = queue.SimpleQueue()
        self.watchers: list[WorkWatcher] = []
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._asked: Counter[str] = Counter()  # threaded jobs submitted and not yet done, by kind
        self._asked_lock = threading.Lock()

    def busy(self, *kinds: str) -> bool:
        """Is threaded work of any of ``kinds`` asked for and not yet done (queued or running)?

        Work of lower priority (live partials) stands aside while it is: a transcription on the turn's
        path must not share the cores with it.
        """
        with self._asked_lock:
            return any(self._asked[kind] for kind in kinds)

    def run(
        self,
        kind: str,
        produce: Callable[[], Iterable[EngineInput]],
        failed: FailureHandler,
        *,
        waits: bool = False,
    ) -> None:
        asked = time.perf_counter()
        if not self.threaded:
            if waits and self.clock is not None:
                self.clock.start(lambda: self._deliver(kind, asked, produce, failed))
            else:
                self._deliver(kind, asked, produce, failed)
            return
        pool = self._pools.get(kind)
        if pool is None:
            pool = self._pools[kind] = ThreadPoolExecutor(1, thread_name_prefix=f"voice-{kind}")
        with self._asked_lock:
            self._asked[kind] += 1
        pool.submit(self._deliver_asked, kind, asked, produce, failed)

    def _deliver_asked(
        self, kind: str, asked: float, produce: Callable[[], Iterable[EngineInput]], failed: FailureHandler
    ) -> None:
        try:
            self._deliver(kind, asked, produce, failed)
        finally:
            with self._asked_lock:
                self._asked[kind] -= 1

    def _deliver(
        self, kind: str, asked: float, produce: Callable[[], Iterable[EngineInput]], failed: FailureHandler
    ) -> None:
        try:
            for event in produce():
                self._put(kind, asked, event)
        except Exception as exc:  # any failure of a component must reach the engine as an event
            for event in failed(exc):
                self._put(kind, asked, event)

    def _put(self, kind: str, asked: float, event: EngineInput) -> None:
        for watcher in self.watchers:
            watcher.produced(kind, event, time.perf_counter() - asked)
        self.inbox.put(event)

    def drain(self) -> Iterator[EngineInput]:
        while True:
            try:
                yield self.inbox.get_nowait()
            except queue.Empty:
                return

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


def describe(exc: Exception) -> str:
    """One line naming what broke."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


class Thinker(Protocol):
    """Where replies come from: a real chat model, or a scenario's script.

    Replies and tool results come back as engine events (through the work inbox, or a script's clock).
    """

    def send(self, request: Request, delay_s: float) -> None: ...

    def stop_turn(self, turn: int, reason: str = INTERRUPTED) -> None:
        """Stop the turn's LLM stream and the tools it started, for good (``reason``: the tokens' reason)."""

    def run_tool(self, turn: int, call: ToolCall) -> None: ...


Tools = Callable[[ToolCall, CancelToken], ToolResult]


class ChatModelThinker:
    """Streams each request from a ChatModel on the ``llm`` worker, under a cancel token per turn.

    ``tools`` runs the calls the model makes (on the ``tool`` worker); without it every call fails.
    ``tool_specs`` are the tools every request offers the model.
    """

    def __init__(
        self,
        model: ChatModel,
        settings: ChatSettings,
        work: Work,
        tools: Tools | None = None,
        tool_specs: tuple[ToolSpec, ...] = (),
    ) -> None:
        self._model = model
        self._settings = settings
        self._work = work
        self._tools = tools
        self._tool_specs = tool_specs
        self._tokens: dict[int, CancelToken] = {}  # streams still running, by turn
        self._tool_tokens: dict[int, list[CancelToken]] = {}  # tools started, by turn
        self._lock = threading.Lock()  # streams end on the worker while the loop sends and cancels

    def send(self, request: Request, delay_s: float) -> None:
        token = CancelToken()
        with self._lock:
            self._tokens[request.turn] = token

        def produce() -> Iterator[EngineInput]:
            try:
                if delay_s and self._wait(delay_s, token):
                    return  # cancelled while waiting to retry
                yield from stream_turn(self._model, request, token, self._settings, self._tool_specs)
            finally:  # a finished stream's token is dropped, so a long session keeps none of them
                with self._lock:
                    if self._tokens.get(request.turn) is token:
                        del self._tokens[request.turn]

        def failed(exc: Exception) -> list[EngineInput]:
            if token.cancelled:
                return []
            error = LLMError(ErrorCode.PROTOCOL, Dispatch.UNKNOWN, describe(exc), retriable=False)
            return [LlmFailed(request.turn, error)]

        self._work.run("llm", produce, failed, waits=True)

    def _wait(self, delay_s: float, token: CancelToken) -> bool:
        """Wait ``delay_s`` before a retry, on the work's clock if it has one; True if cancelled."""
        clock = self._work.clock
        if clock is not None:
            return not clock.sleep_until(clock.now + round(delay_s * clock.rate), token)
        return self._work.threaded and token.wait(delay_s)

    def stop_turn(self, turn: int, reason: str = INTERRUPTED) -> None:
        with self._lock:
            tokens = [self._tokens.pop(turn, None), *self._tool_tokens.pop(turn, [])]
        for token in tokens:
            if token is not None:
                token.cancel(reason)

    def stop_all(self) -> None:
        """Stop every stream and every tool still running (a turn's stream may be done, its tools not)."""
        with self._lock:
            turns = set(self._tokens) | set(self._tool_tokens)
        for turn in turns:
            self.stop_turn(turn)

    def run_tool(self, turn: int, call: ToolCall) -> None:
        """Run ``call`` with the tools given; without any, a call the model makes up fails and says so."""
        tools = self._tools
        if tools is None:
            result = ToolResult(call.id, f"Failed: no tool named {call.name!r}.", failed=True)
            self._work.inbox.put(ToolDone(turn, result))
            return
        token = CancelToken()
        with self._lock:
            self._tool_tokens.setdefault(turn, []).append(token)

        def produce() -> list[EngineInput]:
            result = tools(call, token)
            with self._lock:
                started = self._tool_tokens.get(turn, [])
                if token in started:
                    started.remove(token)
                if not started:
                    self._tool_tokens.pop(turn, None)
            return [] if token.cancelled else [ToolDone(turn, result)]

        def failed(exc: Exception) -> list[EngineInput]:
            return [ToolDone(turn, ToolResult(call.id, f"Failed: {describe(exc)}", failed=True))]

        self._work.run("tool", produce, failed, waits=True)


class ActionRunner:
    """Feeds events to the engine and carries out the actions it returns, until nothing is left to do."""

    def __init__(
        self,
        engine: Engine,
        transcriber: Transcriber,
        synthesizer: Synthesizer,
        thinker: Thinker,
        work: Work,
        buffer: PlaybackBuffer,
        session_log: SessionLog | None = None,
        end_of_turn: EndOfTurn | None = None,
        speaker_embed: Embed | None = None,
    ) -> None:
        self.engine = engine
        self.buffer = buffer
        self.events = EventStream()  # what happens, for every consumer (docs/architecture.md §7)
        self._clock = 0  # end of the last mic block fed: when notices are said
        self._transcriber = transcriber
        self._synthesizer = synthesizer
        self._thinker = thinker
        self._work = work
        self._session_log = session_log
        self._log_listeners: list[LogListener] = []
        self._end_of_turn = end_of_turn
        self._asr_lock = threading.Lock()  # the loop drops transcriptions the ASR worker is taking
        self._asr_wanted: dict[int, CancelToken] = {}  # by utterance, until its transcription is over
        self._tts_turn: tuple[int, CancelToken] | None = None  # the turn being synthesized, and its cancel
        # the conversation's speaker, when the engine asks whose voice it is (docs/architecture.md §10)
        self._voiceprint = None if speaker_embed is None else Voiceprint(speaker_embed)
        self._voices: dict[int, tuple[Tensor, float]] = {}  # embeddings judged, by stretch, until kept
        self._speaker_lock = threading.Lock()  # one embedding at a time: ASR's and the speaker's workers

    @property
    def session_log(self) -> SessionLog | None:
        return self._session_log

    def on_log_record(self, listener: LogListener) -> None:
        """``listener`` gets every record the session log is given, as it is given (a recorder's feed)."""
        self._log_listeners.append(listener)

    def history(self) -> tuple[Item, ...]:
        """The items the next request would carry: the history, then any input not yet answered."""
        return self.engine.conversation.next_items

    @property
    def inputs_taken(self) -> int:
        """Inputs the conversation took so far (its resumed log included)."""
        return self.engine.conversation.inputs

    @property
    def state(self) -> str:
        """The engine's phase as the stream names it."""
        return self.engine.phase.value

    def live_partials(self, load: Callable[[], PartialDecoder]) -> LivePartials:
        """Live words of the user's utterances on this runner's stream (voice/asr/partials.py), decoded
        by what ``load`` gives, standing aside for the turn's own work; shown once asked. Feed it each
        mic block as the engine heard it (``LivePartials.hear``)."""
        engine = self.engine
        partials = LivePartials(
            load,
            self.events.publish,
            lambda: engine.voiced_until,
            yield_to=lambda: self._work.busy(*TURN_PATH_WORK),
            threaded=self._work.threaded,
            rate=self.buffer.rate,
        )
        self.events.subscribe(partials.see)
        return partials

    def new_conversation(self, session_log: SessionLog | None) -> None:
        """End the conversation (the turn in flight is cut, heard words kept in its log) and go on with a
        fresh one in ``session_log``; its turns number on, so late output of old turns is dropped."""
        self.feed(EndConversation())
        if self._voiceprint is not None:
            with self._speaker_lock:
                self._voiceprint.reset()  # the next voice to take a turn is the new speaker
                self._voices.clear()
        old_log, old = self._session_log, self.engine.conversation
        self.engine.start_conversation(Conversation(old.budget, turns_before=old.turns))
        self._session_log = session_log
        if old_log is not None:
            old_log.close()

    def feed(self, event: EngineInput) -> None:
        """Handle one event and, when running inline, everything it sets off."""
        pending = [event]
        while pending:
            handled = pending.pop(0)
            if isinstance(handled, MicAudio):
                self._clock = handled.block.end
            actions = self.engine.handle(handled)
            recorded = self.engine.conversation.take_events()
            if self._session_log is not None:
                self._session_log.append_all(recorded)
            for record in recorded:
                for listener in self._log_listeners:
                    listener(record)
            for happened in self.engine.take_events():
                self.events.publish(happened)
            for action in actions:
                self._carry_out(action)
            if not self._work.threaded:
                pending.extend(self._work.drain())

    def feed_finished_work(self) -> None:
        for event in self._work.drain():
            self.feed(event)

    def report_progress(self, audio_played_to: int, clock: int) -> tuple[int, int] | None:
        """The buffer has handed out its audio up to enqueue index ``audio_played_to``, heard by engine-clock
        sample ``clock``: the engine hears how far the reply queued last got (its ledger keeps it; late
        news of a turn already over is dropped there). Returns (turn, samples of its audio played)."""
        progress = self.buffer.reply_played(audio_played_to)
        if progress is not None:
            self.feed(AudioPlayed(progress[0], progress[1], clock))
        return progress

    def _seconds(self, sample: int) -> float:
        return round(sample / self.buffer.rate, 3)

    def _carry_out(self, action: EngineAction) -> None:
        match action:
            case Transcribe(utterance=utterance, audio=audio, over_reply=over_reply, context=context):
                wanted = CancelToken()
                with self._asr_lock:
                    self._asr_wanted[utterance] = wanted
                self._work.run(
                    "asr",
                    lambda: self._transcribe(utterance, audio, over_reply, context, wanted),
                    lambda exc: (
                        []
                        if wanted.cancelled
                        else [TranscriptFailed(utterance, describe(exc), isinstance(exc, SpeechServerError))]
                    ),
                )
            case DropTranscription(utterance=utterance):
                with self._asr_lock:
                    dropped = self._asr_wanted.pop(utterance, None)
                if dropped is not None:
                    dropped.cancel(DROPPED)
            case JudgeTurnEnd(utterance=utterance, audio=audio):
                judge = self._end_of_turn
                if judge is not None:  # without a model the VAD's long silence ends every turn
                    self._work.run(
                        "turn-end",
                        lambda: [TurnEndJudged(utterance, judge.probability_complete(audio))],
                        lambda exc: [FailedOutsideReply("turn-end", describe(exc))],
                    )
            case JudgeSpeaker(stretch=stretch, audio=audio, before_transcript=before_transcript):
                # a transcription's verdict shares ASR's worker, so it is in before the words it judges
                self._work.run(
                    "asr" if before_transcript else "speaker",
                    lambda: [self._judge_speaker(stretch, audio)],
                    lambda exc: [
                        SpeakerJudged(stretch, None, audio.duration_s),
                        FailedOutsideReply("speaker", describe(exc)),
                    ],
                )
            case KeepVoice(stretch=stretch):
                with self._speaker_lock:
                    kept = self._voices.pop(stretch, None)
                    if kept is not None and self._voiceprint is not None:
                        self._voiceprint.add_embedding(*kept)
            case SendRequest(request=request, delay_s=delay_s):
                self._thinker.send(request, delay_s)
            case CancelTurn(turn=turn, discarded=discarded):
                reason = DISCARDED if discarded else INTERRUPTED
                self._thinker.stop_turn(turn, reason)
                if self._tts_turn is not None and self._tts_turn[0] == turn:
                    self._tts_turn[1].cancel(reason)
            case Synthesize(turn=turn, chunk=chunk, text=text):
                if self._tts_turn is None or self._tts_turn[0] != turn:
                    self._tts_turn = (turn, CancelToken())  # an earlier turn's chunks are all done or cut
                spoken = self._tts_turn[1]
                self._work.run(
                    "tts",
                    lambda: self._synthesize(turn, chunk, text, spoken),
                    lambda exc: [] if spoken.cancelled else [SynthesisFailed(turn, chunk, describe(exc))],
                )
            case Play(turn=turn, audio=audio, at=at):
                self.buffer.enqueue(audio.samples, turn, at)
            case PausePlayback():
                self.buffer.pause()
            case ResumePlayback(turn=turn, replay_from=replay_from):
                if replay_from is not None:
                    self.buffer.replay_from(turn, replay_from)
                self.buffer.resume()
            case StopPlayback():
                self.buffer.stop()
            case RunTool(turn=turn, call=call):
                self._thinker.run_tool(turn, call)
            case SpeakNotice(text=text):
                self.events.publish(NoticeSpoken(text, self._seconds(self._clock)))
                self._work.run(
                    "tts",
                    lambda: self._speak_notice(text),
                    lambda exc: [FailedOutsideReply("tts", describe(exc))],
                )

    def _transcribe(
        self, utterance: int, audio: AudioBlock, over_reply: bool, context: str, wanted: CancelToken
    ) -> list[EngineInput]:
        """On the ASR worker: an utterance dropped while it waited is skipped, saving a whisper run, and
        one dropped while a server transcribes it is abandoned, so the next one does not wait for it."""
        try:
            if wanted.cancelled:
                return []
            heard = self._transcriber.transcribe(audio, over_reply=over_reply, cancel=wanted, context=context)
            reached_back = round(heard.earlier_s * audio.rate)
            return [] if wanted.cancelled else [TranscriptReady(utterance, heard.text, reached_back)]
        finally:
            with self._asr_lock:
                if self._asr_wanted.get(utterance) is wanted:
                    del self._asr_wanted[utterance]

    def enroll_speaker(self, audio: AudioBlock) -> None:
        """``audio`` is the voice that started the conversation (its wake word): it enrolls the speaker,
        unless one is enrolled already; on the speaker worker, as every embedding is."""
        if self._voiceprint is None:
            return

        def enroll() -> list[EngineInput]:
            with self._speaker_lock:
                if self._voiceprint is not None and not self._voiceprint.enrolled:
                    self._voiceprint.add(audio.samples)
            return []

        self._work.run("speaker", enroll, lambda exc: [FailedOutsideReply("speaker", describe(exc))])

    def _judge_speaker(self, stretch: int, audio: AudioBlock) -> SpeakerJudged:
        """On a worker: how like the conversation's speaker ``audio`` sounds (None: nobody enrolled, too
        little voice, or no voiceprint kept); its embedding is kept a while, for KeepVoice to fold in."""
        seconds = audio.duration_s
        with self._speaker_lock:
            voiceprint = self._voiceprint
            if voiceprint is None:
                return SpeakerJudged(stretch, None, seconds)
            embedding = voiceprint.embed(audio.samples)
            if embedding is None:
                return SpeakerJudged(stretch, None, seconds)
            self._voices[stretch] = (embedding, seconds)
            while len(self._voices) > KEPT_VOICES:  # stretches never kept (another voice, a window)
                del self._voices[next(iter(self._voices))]
            return SpeakerJudged(stretch, voiceprint.similarity(embedding), seconds)

    def _synthesize(self, turn: int, chunk: int, text: str, spoken: CancelToken) -> list[EngineInput]:
        """On the TTS worker: a cut turn's chunks are not spoken, and one a server is speaking is left."""
        if spoken.cancelled:
            return []
        synthesis = self._synthesizer.synthesize(text, cancel=spoken)
        return [] if spoken.cancelled else [SynthesisReady(turn, chunk, synthesis)]

    def _speak_notice(self, text: str) -> list[EngineInput]:
        """Synthesized on the TTS worker, so the loop thread never waits for it."""
        self.buffer.enqueue(self._synthesizer.synthesize(text).audio.samples)
        return []
