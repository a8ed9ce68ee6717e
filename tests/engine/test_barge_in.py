"""Barge-in as the user hears it: the speaker goes quiet at once, and only the user's words stop the reply.

The engine, the action runner and the playback buffer are real; the VAD says what the test tells it,
and whisper and piper are stand-ins (their real runs are in tests/sim).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.room import BLOCK, REPLY, Room, ask
from tests.support.stand_ins import RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import VoiceEnded, VoiceStarted
from voice.cancel import CancelToken
from voice.engine.actions import CancelTurn, EngineAction, ResumePlayback
from voice.engine.engine import Engine
from voice.engine.inputs import LlmDone, LlmText, MicAudio, TranscriptReady
from voice.engine.phases import Phase
from voice.engine.transcripts import is_fragment, is_meaningful, sounds_like_echo
from voice.recorder import Recorder
from voice.runtime import ActionRunner, Work
from voice.testing.stand_ins import QUESTION, WORD, EvenSynthesizer, Hears, ScriptedVad
from voice.tts.port import Synthesis, WordTiming

FADE = 80  # the buffer's 5 ms fade on pause and stop
STORY = (
    "Once upon a time, an old grey fox lived alone on a snowy hill above a quiet valley. Each winter "
    "night he sat outside his den, listened to the owls in the pine trees, and counted the stars. There "
    "was a little river at the foot of the hill, and in the spring it grew loud and fast with melted snow."
)
INTERRUPTIONS = [
    "Sorry, I meant on Sunday.",
    "Wait, stop.",
    "Stop.",
    "Hold on.",
    "Hello there.",
    "And what should I wear?",
    "Thanks, that's all.",
    "Actually, what about the weekend?",
    "No.",
]


class WordToneSynthesizer:
    """Every word gets WORD samples of its own level (a chunk's first word 0.01, its second 0.02, ...),
    so which word plays, and how much of it, can be read off the speaker."""

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        words = text.split()
        tone = np.repeat(np.arange(1, len(words) + 1, dtype=np.float32) / 100, WORD)
        timings = tuple(WordTiming(w, i * WORD, (i + 1) * WORD) for i, w in enumerate(words))
        return Synthesis(AudioBlock(tone, ENGINE_RATE), timings)


class Speaker:
    """The engine and runner with a playback buffer pulled block by block, as a sound card would."""

    def __init__(self, synthesizer: EvenSynthesizer | WordToneSynthesizer | None = None) -> None:
        self.vad = ScriptedVad()
        self.transcriber = Hears()
        self.thinker = RecordingThinker()
        self.buffer = PlaybackBuffer(ENGINE_RATE)
        self.runner = ActionRunner(
            Engine(self.vad),
            self.transcriber,
            synthesizer or EvenSynthesizer(),
            self.thinker,
            Work(False),
            self.buffer,
        )
        self.recorder = Recorder.following(self.runner)  # what a client sees of it
        self.clock = 0

    def block(self, *events: VoiceStarted | VoiceEnded) -> Samples:
        """One block: the speaker plays, progress is reported, then the mic block with these VAD events."""
        played = self.buffer.pull(BLOCK)
        self.clock += BLOCK
        self.runner.report_progress(self.buffer.audio_played_to, self.clock)
        self.vad.next_events = list(events)
        self.runner.feed(MicAudio(AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, self.clock - BLOCK)))
        return played

    def utterance(self, text: str) -> Samples:
        """The user makes one sound, transcribed as ``text``; returns what played once its onset was heard."""
        self.transcriber.queued.append(text)
        start = self.clock
        self.block(VoiceStarted(start))
        for _ in range(36):  # a second and a half of it
            self.block()
        end = VoiceEnded(self.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, start))
        return self.block(end)

    def answer(self, text: str) -> None:
        turn = self.thinker.sent[-1].turn
        for word in text.split(" "):
            self.runner.feed(LlmText(turn, word + " "))
        self.runner.feed(LlmDone(turn))


def speaking(synthesizer: EvenSynthesizer | WordToneSynthesizer | None = None) -> Speaker:
    speaker = Speaker(synthesizer)
    speaker.utterance(QUESTION)
    speaker.answer("".join(REPLY))
    for _ in range(20):
        assert speaker.block().any()  # the reply is playing
    return speaker


def test_speech_over_the_reply_silences_the_speaker_until_a_knock_is_judged_not_words() -> None:
    speaker = speaking()

    during = speaker.utterance("(knocking)")

    assert not during[FADE:].any()  # paused at the onset, before any transcript
    assert speaker.block().any()  # the knock was no words: the reply goes on
    assert not speaker.recorder.turns[1].interrupted
    assert speaker.recorder.turns[1].false_barge_ins == 1


def test_the_users_words_over_the_reply_stop_it_for_good() -> None:
    speaker = speaking()

    speaker.utterance("Sorry, I meant on Sunday.")

    assert not any(speaker.block().any() for _ in range(20))
    assert speaker.recorder.turns[1].interrupted
    assert speaker.recorder.turns[1].barge_in_s is not None
    assert speaker.thinker.sent[-1].items[-1].text == "Sorry, I meant on Sunday."  # type: ignore[union-attr]


def test_after_a_backchannel_the_word_the_pause_cut_plays_again_from_its_start() -> None:
    speaker = speaking(WordToneSynthesizer())  # 20 blocks: 1.6 words played, the second cut mid-way

    during = speaker.utterance("Yeah.")

    assert not during[FADE:].any()  # paused at the onset, as for any speech
    resumed = np.concatenate([speaker.block() for _ in range(20)])
    assert np.all(resumed[:FADE] <= 0.02)  # faded in, then the second word whole, from its start
    assert np.allclose(resumed[FADE:WORD], 0.02)
    assert np.allclose(resumed[WORD : 2 * WORD], 0.03)  # then the reply goes on
    assert not speaker.recorder.turns[1].interrupted
    assert [overlap.text for overlap in speaker.recorder.backchannels] == ["Yeah."]
    assert speaker.thinker.sent[-1].turn == 1  # nothing asked


def test_a_cough_is_not_resumed_over_while_the_user_goes_on_speaking() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 4_000)
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))
    room.tick(VoiceStarted(room.clock))  # the user starts talking before the cough's transcript is back

    assert room.engine.handle(TranscriptReady(2, "[coughing]")) == []  # not resumed over the user

    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))
    assert room.engine.handle(TranscriptReady(3, "Sorry, I meant on Sunday."))[0] == CancelTurn(1)


def test_a_second_cough_after_the_first_resumes_the_reply() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 4_000)
    for utterance in (2, 3):
        room.tick(VoiceStarted(room.clock))
        room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))
        actions = room.engine.handle(TranscriptReady(utterance, "[coughing]"))

    assert actions == [ResumePlayback(1)]


@pytest.mark.parametrize("sound", ["(knocking)", "[coughing]", "*click*", "(door slams) [music]"])
def test_whisper_sound_annotations_are_not_words(sound: str) -> None:
    assert not is_meaningful(sound)


@pytest.mark.parametrize(
    ("heard", "played", "at_pause"),
    [
        ("Once you're", "Once upon a time, an old grey fox", 0),  # a scrap of the first word, then guesses
        ("Once the stop.", "Once upon a time, an old grey fox", 0),
        ("There was a little", "on a snowy hill. There was a little river at the foot", 8),
        ("was a lot.", "There was a little river at", 3),
        ("an old grey fox", "Once upon a time, an old grey fox lived", 6),
        ("and counted the stairs", "listened to the owls and counted the stars. When", 7),
        ("starting.", "an old tractor that coughed every time it started.", 8),
    ],
)
def test_partial_and_misheard_echo_of_the_reply_is_recognised(heard: str, played: str, at_pause: int) -> None:
    assert sounds_like_echo(heard, played, at_pause)


@pytest.mark.parametrize("said", INTERRUPTIONS)
def test_a_user_cutting_in_is_never_taken_for_echo_wherever_the_reply_was(said: str) -> None:
    words = STORY.split()
    for pause in range(len(words)):
        first = max(0, pause - 12)
        assert not sounds_like_echo(said, " ".join(words[first : pause + 2]), pause - first), (said, pause)


def test_sharing_half_its_words_with_the_reply_does_not_make_speech_echo() -> None:
    played = "it will rain all week, but on Sunday it stays dry all day"

    assert not sounds_like_echo("No, on Sunday please.", played, 9)
    assert sounds_like_echo("but on Sunday it stays", played, 9)


def speech_over_the_reply(voiced_samples: int, text: str, reached_back: int = 0) -> list[EngineAction]:
    """The reply plays; the user (or leaked echo) is voiced for ``voiced_samples``; its transcript is back
    (ASR heard ``reached_back`` samples before the VAD's cut too)."""
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 4_000)
    onset = room.clock
    room.tick(VoiceStarted(onset))
    audio = AudioBlock(np.zeros(voiced_samples, np.float32), ENGINE_RATE, onset)
    room.tick(VoiceEnded(onset + voiced_samples, audio))
    return room.engine.handle(TranscriptReady(2, text, reached_back))


def test_a_scrap_of_leaked_echo_too_short_to_be_speech_resumes_the_reply() -> None:
    assert speech_over_the_reply(ENGINE_RATE // 5, "One step.") == [ResumePlayback(1)]  # 0.2 s voiced


def test_a_cut_in_the_vad_found_late_is_judged_on_all_the_voice_asr_heard() -> None:
    """Over a reply AEC3 mutes a cut-in's start and the VAD finds it late; ASR reaches back to where the
    voice began. Its words, too many for the VAD's 0.9 s, were said over 1.7 s: the user's, not a scrap."""
    said = "It's going to be a be sure it I meant on Sunday."  # echo before the user, then the user
    assert speech_over_the_reply(round(0.9 * ENGINE_RATE), said) == [ResumePlayback(1)]
    assert speech_over_the_reply(round(0.9 * ENGINE_RATE), said, round(0.8 * ENGINE_RATE))[0] == CancelTurn(1)


@pytest.mark.parametrize("text", ["Stop.", "No.", "Wait, stop."])
def test_a_short_word_really_said_stops_the_reply(text: str) -> None:
    assert speech_over_the_reply(ENGINE_RATE // 2, text)[0] == CancelTurn(1)  # 0.5 s voiced


def test_three_words_in_a_fifth_of_a_second_are_whisper_guessing_not_the_user() -> None:
    assert is_fragment("We can walk.", 0.22)
    assert is_fragment("That was great.", 0.32)
    assert not is_fragment("Hello there.", 0.5)
    assert not is_fragment("Sorry, I meant on Sunday.", 1.5)


def test_the_last_words_of_a_finished_reply_coming_back_through_the_mic_start_no_turn() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, len(REPLY) * 4_000)  # played out: the turn is over
    assert room.engine.active_turn is None

    assert room.say("from the west.", 2) == []  # its own echo, a moment later
    assert room.engine.phase is Phase.LISTENING
    assert room.say("Thanks, that's all.", 3) != []  # the user, though, is heard
