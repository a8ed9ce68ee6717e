"""Only the conversation's speaker takes turns (``[turn] speaker = "conversation"``, architecture §10).

The engine, the action runner, its voiceprint and the playback buffer are real; the VAD says what the test
tells it, whisper and piper are stand-ins, and the voice embedding is a fake that reads a voice off the
audio's level (the real encoder's runs are in tests/sim and tests/speaker).
"""

from __future__ import annotations

import numpy as np

from tests.support.room import BLOCK, REPLY
from tests.support.stand_ins import NotingTranscriber, RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.playback import PlaybackBuffer
from voice.audio.vad import VoiceEnded, VoiceStarted
from voice.engine.actions import JudgeSpeaker, KeepVoice, Transcribe
from voice.engine.engine import Engine
from voice.engine.inputs import LlmDone, LlmText, MicAudio, SpeakerJudged
from voice.engine.speaker_check import ANOTHER_VOICE, SpeakerCheck
from voice.recorder import Recorder
from voice.runtime import ActionRunner, Work
from voice.speaker.weights import Tensor
from voice.testing.stand_ins import QUESTION, EvenSynthesizer, ScriptedVad

USER, TELEVISION = 0.1, 0.3  # the level each voice's audio is filled with
NEAR_USER, LOUD_TELEVISION = 0.9, 0.95  # the same voices 9.5 dB above the television
VOICES = {USER: np.array([1.0, 0.0], np.float32), TELEVISION: np.array([0.0, 1.0], np.float32)}


def level_voice(samples: Samples) -> Tensor | None:
    """A stand-in embedding: the voice whose level the audio mostly has; None under 0.3 s, as the encoder."""
    if len(samples) < 0.3 * ENGINE_RATE:
        return None
    user = np.count_nonzero(np.isclose(samples, USER) | np.isclose(samples, NEAR_USER))
    television = np.count_nonzero(np.isclose(samples, TELEVISION) | np.isclose(samples, LOUD_TELEVISION))
    return VOICES[USER if user >= television else TELEVISION]


class Kiosk:
    """The engine and runner with a playback buffer pulled block by block, as a sound card would."""

    def __init__(self, speaker: bool = True) -> None:
        self.vad = ScriptedVad()
        self.transcriber = NotingTranscriber()
        self.thinker = RecordingThinker()
        self.buffer = PlaybackBuffer(ENGINE_RATE)
        self.engine = Engine(self.vad, speaker=speaker)
        self.runner = ActionRunner(
            self.engine,
            self.transcriber,
            EvenSynthesizer(),
            self.thinker,
            Work(False),
            self.buffer,
            speaker_embed=level_voice if speaker else None,
        )
        self.recorder = Recorder.following(self.runner)
        self.events: list[object] = []
        self.runner.events.subscribe(self.events.append)
        self.clock = 0
        self.heard: list[AudioBlock] = []  # the audio of each utterance the VAD ended

    def block(self, *events: VoiceStarted | VoiceEnded, mic: Samples | None = None) -> Samples:
        """One block: the speaker plays, progress is reported, then the mic block (silent unless ``mic``)
        with these VAD events."""
        played = self.buffer.pull(BLOCK)
        self.clock += BLOCK
        self.runner.report_progress(self.buffer.audio_played_to, self.clock)
        self.vad.next_events = list(events)
        heard = np.zeros(BLOCK, np.float32) if mic is None else np.resize(mic, BLOCK)
        self.runner.feed(MicAudio(AudioBlock(heard, ENGINE_RATE, self.clock - BLOCK)))
        return played

    def speak(self, voices: list[tuple[float, float]], text: str) -> list[Samples]:
        """One utterance of (voice, seconds) parts, transcribed as ``text``; returns what played meanwhile."""
        self.transcriber.queued.append(text)
        start = self.clock
        audio = np.concatenate([np.full(round(s * ENGINE_RATE), v, np.float32) for v, s in voices])
        played = [self.block(VoiceStarted(start), mic=audio[:BLOCK])]
        while self.clock - start < len(audio) - BLOCK:
            self.vad.so_far = AudioBlock(audio[: self.clock - start], ENGINE_RATE, start)
            at = self.clock - start
            played.append(self.block(mic=audio[at : at + BLOCK]))
        utterance = AudioBlock(audio, ENGINE_RATE, start)
        self.heard.append(utterance)
        played.append(self.block(VoiceEnded(start + len(audio), utterance)))
        self.vad.so_far = None
        return played

    def answer(self) -> None:
        turn = self.thinker.sent[-1].turn
        for word in REPLY:
            self.runner.feed(LlmText(turn, word))
        self.runner.feed(LlmDone(turn))

    def ignored(self) -> list[str]:
        return [event.why for event in self.events if getattr(event, "type", "") == "input.ignored"]  # type: ignore[attr-defined]


def asked_and_answered() -> Kiosk:
    kiosk = Kiosk()
    kiosk.speak([(USER, 2.0)], QUESTION)  # the first question enrolls its voice
    kiosk.answer()
    for _ in range(10):
        assert kiosk.block().any()  # the reply plays
    return kiosk


def test_another_voice_in_the_quiet_starts_no_turn_and_the_speaker_still_does() -> None:
    kiosk = asked_and_answered()
    while kiosk.buffer.queued_frames:
        kiosk.block()
    for _ in range(40):
        kiosk.block()

    kiosk.speak([(TELEVISION, 2.0)], "And now the weather for the weekend.")
    assert len(kiosk.thinker.sent) == 1
    assert kiosk.ignored() == [ANOTHER_VOICE]

    kiosk.speak([(USER, 1.5)], "And tomorrow?")
    assert len(kiosk.thinker.sent) == 2
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("And tomorrow?")  # type: ignore[union-attr]


def test_another_voice_over_the_reply_resumes_it_before_it_ends_and_cuts_nothing() -> None:
    kiosk = asked_and_answered()

    played = kiosk.speak([(TELEVISION, 3.0)], "Did you see the match last night?")

    assert not played[2][80:].any()  # paused at its onset, as for any speech
    assert played[-1].any()  # judged another voice at half a second: the reply went on over it
    assert len(kiosk.thinker.sent) == 1
    assert not kiosk.recorder.turns[1].interrupted
    assert kiosk.ignored() == [ANOTHER_VOICE]


def test_the_speakers_cut_in_over_the_reply_still_cuts_it_with_every_word() -> None:
    kiosk = asked_and_answered()

    played = kiosk.speak([(USER, 1.5)], "Sorry, I meant on Sunday.")

    assert not any(block[80:].any() for block in played[2:])  # paused throughout, then cut
    assert kiosk.recorder.turns[1].interrupted
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("Sorry, I meant on Sunday.")  # type: ignore[union-attr]
    assert kiosk.ignored() == []


def test_the_speaker_cutting_in_while_another_voice_goes_on_cuts_the_reply_from_their_words() -> None:
    kiosk = asked_and_answered()

    played = kiosk.speak([(TELEVISION, 2.0), (USER, 2.0)], "Stop, what about Sunday?")

    assert kiosk.ignored() == [ANOTHER_VOICE]
    assert any(block.any() for block in played[40:90])  # the reply went on over the television
    assert not played[-1][80:].any()  # and was paused once the speaker's voice was heard in it
    assert kiosk.recorder.turns[1].interrupted
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("Stop, what about Sunday?")  # type: ignore[union-attr]
    # whisper heard the speaker's words from a little before the window they were found in, not the
    # television's first second and a half
    heard = kiosk.transcriber.audio[-1]
    began = kiosk.heard[-1].start
    assert 1.0 * ENGINE_RATE <= heard.start - began <= 2.0 * ENGINE_RATE


def test_a_cut_in_among_another_voice_ends_where_the_speakers_voice_does_not_where_the_other_stops() -> None:
    kiosk = asked_and_answered()
    parts = [(TELEVISION, 2.0), (USER, 2.0), (TELEVISION, 6.0)]  # the television never pauses
    audio = np.concatenate([np.full(round(s * ENGINE_RATE), v, np.float32) for v, s in parts])
    kiosk.transcriber.queued.append("What about Sunday?")
    start = kiosk.clock
    kiosk.block(VoiceStarted(start))
    while kiosk.vad.utterances_ended == 0 and kiosk.clock - start < len(audio) - BLOCK:
        kiosk.vad.so_far = AudioBlock(audio[: kiosk.clock - start], ENGINE_RATE, start)
        kiosk.block()
    ended_at = (kiosk.clock - start) / ENGINE_RATE
    kiosk.vad.so_far = None
    kiosk.block(VoiceStarted(kiosk.clock))  # the VAD goes on with the television's voice: overheard
    for _ in range(100):
        kiosk.block()

    assert ended_at < 7.0  # the turn ended 1.5 s of windows after the speaker stopped, not at 10 s
    assert len(kiosk.thinker.sent) == 2
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("What about Sunday?")  # type: ignore[union-attr]
    heard = kiosk.transcriber.audio[-1]
    assert heard.end - start <= 4.6 * ENGINE_RATE  # the words up to the speaker's end, little of the rest
    assert kiosk.engine.phase.value != "paused"  # the television's voice after it pauses nothing


def test_a_new_conversation_takes_its_first_voice_as_its_speaker() -> None:
    kiosk = asked_and_answered()
    while kiosk.buffer.queued_frames:
        kiosk.block()
    for _ in range(40):
        kiosk.block()

    kiosk.runner.new_conversation(None)
    kiosk.speak([(TELEVISION, 2.0)], "Hello, is this the help desk?")

    assert kiosk.ignored() == []
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("Hello, is this the help desk?")  # type: ignore[union-attr]


def test_with_anyone_taking_turns_no_voice_is_judged_and_another_voice_cuts_as_before() -> None:
    kiosk = Kiosk(speaker=False)
    kiosk.speak([(USER, 2.0)], QUESTION)
    kiosk.answer()
    for _ in range(10):
        kiosk.block()

    kiosk.speak([(TELEVISION, 2.0)], "Did you see the match last night?")

    assert kiosk.recorder.turns[1].interrupted
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("Did you see the match last night?")  # type: ignore[union-attr]


def test_too_little_voice_or_no_print_refuses_no_one() -> None:
    check = SpeakerCheck(True, ENGINE_RATE)

    assert not check.is_other(SpeakerJudged(1, 0.1, 0.4))  # under half a second: too little to refuse
    assert not check.is_other(SpeakerJudged(2, None, 2.0))  # nobody enrolled yet
    assert check.is_other(SpeakerJudged(3, 0.4, 1.0))


def test_half_a_second_of_voice_is_refused_only_far_from_the_print_a_second_nearer() -> None:
    check = SpeakerCheck(True, ENGINE_RATE)

    assert not check.is_other(SpeakerJudged(1, 0.55, 0.5))  # a real user's short stretch often scores so
    assert check.is_other(SpeakerJudged(2, 0.35, 0.5))
    assert check.is_other(SpeakerJudged(3, 0.55, 1.0))


def test_a_transcriptions_verdict_is_taken_on_its_voice_not_its_pre_roll() -> None:
    check = SpeakerCheck(True, ENGINE_RATE)
    audio = AudioBlock(np.zeros(round(0.9 * ENGINE_RATE), np.float32), ENGINE_RATE)  # 0.6 s of voice
    (ask, _) = check.with_transcriptions([Transcribe(1, audio)])
    assert isinstance(ask, JudgeSpeaker)
    assert ask.before_transcript  # on ASR's worker, ahead of the words

    check.took(SpeakerJudged(ask.stretch, 0.55, audio.duration_s))

    assert not check.transcription_is_other(1)  # a short utterance: the short stretch's threshold
    assert check.keep(1) == [KeepVoice(ask.stretch)]


def silent_from(played: list[Samples]) -> int:
    """The first block of ``played`` from which the reply stays silent (paused or cut) to the end."""
    index = len(played)
    while index > 0 and not played[index - 1][80:].any():
        index -= 1
    return index


def test_the_speaker_rising_above_another_voice_pauses_the_reply_at_once_and_cuts_it_from_there() -> None:
    kiosk = asked_and_answered()

    played = kiosk.speak([(TELEVISION, 1.5), (NEAR_USER, 2.0)], "Stop, what about Sunday?")

    rise = round(1.5 * ENGINE_RATE) // BLOCK  # the block the speaker's voice begins in
    assert all(block.any() for block in played[rise - 20 : rise])  # the reply went on over the television
    assert rise <= silent_from(played) <= rise + 8  # and fell silent within 0.16 s of their voice
    assert kiosk.recorder.turns[1].interrupted
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("Stop, what about Sunday?")  # type: ignore[union-attr]
    heard = kiosk.transcriber.audio[-1]  # from just before the rise, not the television's three seconds
    assert 1.1 * ENGINE_RATE <= heard.start - kiosk.heard[-1].start <= 1.5 * ENGINE_RATE


def test_another_voice_rising_above_the_overheard_one_pauses_the_reply_only_until_its_verdict() -> None:
    kiosk = asked_and_answered()

    played = kiosk.speak([(TELEVISION, 1.5), (LOUD_TELEVISION, 1.5)], "And now, the football.")

    rise = round(1.5 * ENGINE_RATE) // BLOCK
    assert not played[rise + 8][80:].any()  # paused at the louder voice, as for any speech over the reply
    assert played[-1].any()  # judged another voice: the reply went on
    assert len(kiosk.thinker.sent) == 1
    assert not kiosk.recorder.turns[1].interrupted
    assert kiosk.ignored() == [ANOTHER_VOICE, ANOTHER_VOICE]


def test_a_louder_voice_that_ends_before_any_verdict_finds_it_the_speakers_takes_no_turn() -> None:
    kiosk = asked_and_answered()

    kiosk.speak([(TELEVISION, 1.5), (LOUD_TELEVISION, 0.4)], "Seven of clubs.")
    for _ in range(20):
        kiosk.block()

    assert len(kiosk.thinker.sent) == 1  # the louder words were not sent
    assert not kiosk.recorder.turns[1].interrupted
    assert kiosk.ignored() == [ANOTHER_VOICE, ANOTHER_VOICE]


def test_over_the_reply_another_voice_going_on_after_its_pause_is_overheard_without_a_pause() -> None:
    kiosk = asked_and_answered()
    kiosk.speak([(TELEVISION, 1.5)], "Good evening.")  # paused a second, then judged another voice

    played = [kiosk.block() for _ in range(10)]
    played += kiosk.speak([(TELEVISION, 0.8)], "Here is the news.")

    assert all(block.any() for block in played)  # its next sentence paused nothing
    assert kiosk.ignored() == [ANOTHER_VOICE]
    assert len(kiosk.thinker.sent) == 1


def test_in_the_quiet_with_a_television_about_it_is_overheard_and_a_question_rising_over_it_taken() -> None:
    kiosk = asked_and_answered()
    while kiosk.buffer.queued_frames:
        kiosk.block()
    kiosk.speak([(TELEVISION, 2.0)], "And now the weather.")  # judged whole, as ever: another voice
    for _ in range(40):
        kiosk.block()

    kiosk.speak([(TELEVISION, 1.5), (NEAR_USER, 1.5)], "What about Sunday?")

    assert kiosk.ignored() == [ANOTHER_VOICE, ANOTHER_VOICE]  # the television's next words: at 1 s
    assert len(kiosk.thinker.sent) == 2
    assert kiosk.thinker.sent[-1].items[-1].text.endswith("What about Sunday?")  # type: ignore[union-attr]
    heard = kiosk.transcriber.audio[-1]  # from just before their voice rose, none of the television's 1.5 s
    assert 1.1 * ENGINE_RATE <= heard.start - kiosk.heard[-1].start <= 1.5 * ENGINE_RATE
