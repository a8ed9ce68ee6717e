"""`voice doctor`'s verdict: how soon a turn ends under each eagerness given the models' costs, and the
warnings where a path is too slow for its setting, with what to change."""

from __future__ import annotations

from voice.telemetry.expected_turns import LONG_SILENCE_MS, Costs, as_json, expected


def costs(
    whisper: float = 120,
    smart_turn: float = 40,
    decision: float | None = None,
    first_audio: float = 100,
    asr: str = "whisper",
    asr_is_server: bool = False,
    smaller_asr: str | None = None,
) -> Costs:
    beside = whisper + 10  # sharing the cores with Smart Turn
    decided = decision or beside
    return Costs(whisper, smart_turn, beside, decided, first_audio, asr, asr_is_server, smaller_asr)


def test_on_a_fast_machine_auto_plays_at_its_hold_and_high_at_once_with_no_warning() -> None:
    figures = expected(costs(whisper=120, smart_turn=40, decision=140, first_audio=100))
    low, auto, high = figures["low"], figures["auto"], figures["high"]
    assert (low.ends_early, low.request_ms, low.first_audio_ms) == (False, LONG_SILENCE_MS, 700)
    assert (auto.ends_early, auto.request_ms, auto.first_audio_ms) == (True, 340, 520)  # the hold's 520 ms
    assert (high.ends_early, high.request_ms, high.first_audio_ms) == (True, 240, 340)
    assert [f.warning for f in figures.values()] == [None, None, None]


def test_a_decision_slower_than_the_long_silence_makes_auto_wait_for_it_and_says_what_to_change() -> None:
    # the AVX2-only EPYC: whisper and Smart Turn side by side came back 420 ms after the pause
    figures = expected(costs(whisper=300, smart_turn=110, decision=420, first_audio=250, smaller_asr="tiny"))
    auto = figures["auto"]
    assert not auto.ends_early
    assert auto.request_ms == LONG_SILENCE_MS  # whisper's own transcript (510 ms) was back by then
    assert auto.warning is not None
    assert "620 ms after your last word" in auto.warning
    assert "--asr-model tiny" in auto.warning
    assert "or choose low" in auto.warning
    assert figures["high"].ends_early  # its pause is 100 ms shorter: 520 ms still beats the silence


def test_high_that_cannot_beat_the_long_silence_is_told_to_choose_low() -> None:
    figures = expected(costs(whisper=560, smart_turn=100, decision=580))
    high = figures["high"]
    assert not high.ends_early
    assert high.warning is not None
    assert "choose low instead of high" in high.warning
    assert high.request_ms == 670  # the silence ended it; the transcript asked at the 100 ms pause came later
    assert figures["low"].request_ms == 760  # whisper alone, asked at the 200 ms pause: low skips Smart Turn
    assert figures["low"].warning is not None
    assert "160 ms after the long silence" in figures["low"].warning


def test_high_whose_first_audio_misses_600_ms_is_told_to_choose_auto_and_the_slow_voice_is_named() -> None:
    figures = expected(costs(whisper=250, smart_turn=80, decision=300, first_audio=350))
    high, auto = figures["high"], figures["auto"]
    assert high.ends_early
    assert high.first_audio_ms == 750
    assert auto.first_audio_ms == 850
    assert high.warning is not None
    assert "auto answers 100 ms later" in high.warning
    assert "choose auto instead of high" in high.warning
    assert "--tts URL" in high.warning  # the voice, not whisper, takes longest here
    assert auto.warning is None


def test_the_advice_names_what_takes_longest() -> None:
    slow_turn = expected(costs(whisper=200, smart_turn=450, decision=460))["auto"].warning
    assert slow_turn is not None
    assert "Smart Turn takes 450 ms" in slow_turn
    server = expected(costs(whisper=500, decision=510, asr="wyoming://box:10300", asr_is_server=True))
    assert "the speech server (wyoming://box:10300) takes 500 ms" in str(server["auto"].warning)
    smallest = expected(costs(whisper=500, decision=510, asr="tiny.en"))["auto"].warning
    assert "is the smallest model: use a speech server" in str(smallest)


def test_the_json_lists_every_eagerness_in_order() -> None:
    printed = as_json(expected(costs()))
    assert list(printed) == ["low", "auto", "high"]
    assert set(printed["auto"]) == {"eagerness", "ends_early", "request_ms", "first_audio_ms", "warning"}
