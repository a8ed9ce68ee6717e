"""The hold before a reply to a turn ended at a short pause: set by eagerness, adapted to the speaker."""

from __future__ import annotations

import itertools

from voice.audio.block import ENGINE_RATE
from voice.engine.hold import LONGEST_MS, START_MS, Eagerness, Hold

SURE, UNSURE = 0.98, 0.55


def at(ms: int) -> int:
    return ms * ENGINE_RATE // 1000


class Speaker:
    """Turns on a sample clock, each ended at a pause Smart Turn called finished."""

    def __init__(self, hold: Hold) -> None:
        self.hold = hold
        self.clock = 0

    def turn_ended(self, probability: float = SURE) -> int:
        self.clock += at(2000)  # two seconds of speech
        self.hold.ended_early(self.clock, probability)
        return self.clock

    def quiet_until_next_turn(self) -> None:
        """The reply plays and the user next speaks seconds later: that end held."""
        self.clock += at(4000)
        self.hold.speech_started(self.clock)

    def goes_on_after(self, pause_ms: int) -> None:
        """The pause taken for the end was mid-sentence: the user goes on."""
        self.clock += at(pause_ms)
        self.hold.went_on(self.clock)
        self.hold.speech_started(self.clock)


def test_a_speaker_who_never_pauses_mid_sentence_gets_a_shorter_hold_never_under_250_ms() -> None:
    speaker = Speaker(Hold())
    holds = []
    for _ in range(12):
        speaker.turn_ended()
        holds.append(speaker.hold.ms)
        speaker.quiet_until_next_turn()

    assert holds[0] == 520
    assert all(later <= earlier for earlier, later in itertools.pairwise(holds))
    assert holds[3] <= 450  # a few turns in, the answer comes within 450 ms of the pause
    assert holds[-1] == 250  # the floor: an answer never comes sooner after a pause


def test_a_speaker_who_pauses_mid_sentence_gets_a_longer_hold_up_to_1_s() -> None:
    speaker = Speaker(Hold())
    holds = []
    for pause_ms in (460, 480, 700, 900, 950):
        speaker.turn_ended()
        holds.append(speaker.hold.ms)
        speaker.goes_on_after(pause_ms)
        assert speaker.hold.next_ms >= min(LONGEST_MS, pause_ms + 100)  # covers that pause next time
    speaker.turn_ended()
    holds.append(speaker.hold.ms)

    assert holds[0] == 520
    assert all(later > earlier for earlier, later in itertools.pairwise(holds[:-1]))
    assert holds[-1] == 1000


def test_a_speaker_who_paused_once_is_never_held_shorter_than_that_pause() -> None:
    speaker = Speaker(Hold())
    speaker.turn_ended()
    speaker.goes_on_after(450)
    for _ in range(15):
        speaker.turn_ended()
        speaker.quiet_until_next_turn()

    assert speaker.hold.ms >= 450 + 100
    assert speaker.hold.ms < START_MS + 120  # and it came back down from where the pause put it


def test_a_pause_smart_turn_did_not_take_for_the_end_still_lengthens_a_short_hold() -> None:
    speaker = Speaker(Hold())
    for _ in range(12):
        speaker.turn_ended()
        speaker.quiet_until_next_turn()
    assert speaker.hold.ms == 250

    speaker.hold.paused_within_turn(at(100_000), at(100_600))  # 600 ms, then the user went on
    speaker.turn_ended()

    assert speaker.hold.ms >= 600 + 100


def test_smart_turns_confidence_sets_how_fast_the_hold_moves() -> None:
    sure, unsure = Speaker(Hold()), Speaker(Hold())
    for _ in range(3):
        sure.turn_ended(SURE)
        sure.quiet_until_next_turn()
        unsure.turn_ended(UNSURE)
        unsure.quiet_until_next_turn()
    sure.turn_ended(SURE)
    unsure.turn_ended(UNSURE)
    assert sure.hold.ms < unsure.hold.ms < START_MS

    fooled_sure, fooled_unsure = Speaker(Hold()), Speaker(Hold())
    fooled_sure.turn_ended(SURE)
    fooled_sure.goes_on_after(300)
    fooled_unsure.turn_ended(UNSURE)
    fooled_unsure.goes_on_after(300)
    assert fooled_sure.hold.next_ms > fooled_unsure.hold.next_ms > START_MS


def test_each_change_is_told_once_with_its_reason_when_it_takes_effect() -> None:
    speaker = Speaker(Hold())
    speaker.turn_ended()
    assert speaker.hold.take_changes() == []
    speaker.goes_on_after(460)
    assert speaker.hold.take_changes() == []  # learned; it applies from the next turn ended at a pause

    speaker.turn_ended()
    (change,) = speaker.hold.take_changes()

    assert (change.was_ms, change.hold_ms) == (START_MS, speaker.hold.ms)
    assert "460 ms pause" in change.why
    assert speaker.hold.take_changes() == []


def test_speech_soon_after_an_end_is_left_to_its_transcript() -> None:
    """A cough 400 ms after an early end neither confirms it nor calls it a pause; real words decide."""
    speaker = Speaker(Hold())
    end = speaker.turn_ended()
    speaker.hold.speech_started(end + at(400))
    speaker.hold.speech_started(end + at(5000))
    speaker.turn_ended()

    assert speaker.hold.ms < START_MS


def test_high_has_no_hold_and_low_never_ends_early_and_neither_adapts() -> None:
    for eagerness, ends_early, hold_ms in ((Eagerness.HIGH, True, 0), (Eagerness.LOW, False, START_MS)):
        speaker = Speaker(Hold(eagerness))
        assert speaker.hold.ends_early is ends_early
        for _ in range(5):
            speaker.turn_ended()
            speaker.goes_on_after(400)
        assert speaker.hold.ms == hold_ms
        assert speaker.hold.take_changes() == []


def test_a_new_conversation_starts_from_the_setting_again() -> None:
    speaker = Speaker(Hold())
    for _ in range(5):
        speaker.turn_ended()
        speaker.quiet_until_next_turn()
    speaker.turn_ended()
    assert speaker.hold.ms < START_MS

    speaker.hold.reset()
    speaker.turn_ended()

    assert speaker.hold.ms == START_MS


def test_a_pause_the_user_went_on_from_lengthens_the_hold_but_one_over_a_reply_does_not() -> None:
    over_reply, quiet = Hold(), Hold()
    for hold, over in ((over_reply, True), (quiet, False)):
        hold.user_paused(None if over else at(1000))
        hold.user_resumed(at(1700), over_reply=over)  # a 700 ms pause mid-sentence

    assert over_reply.next_ms == START_MS  # echo over a reply can look like a pause: nothing learned
    assert quiet.next_ms == 700 + 120  # the speaker pauses 700 ms: the hold outlasts that
