"""What the stream and the session log hear of a reply's playback: when it began, each word heard, at
its end what was measured or what a cut left unheard."""

from __future__ import annotations

from voice.client_events import OutputAudioStarted, ResponseHeard
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.engine.reply_report import ReplyReport

RATE = 16_000
QUARTER = RATE // 4  # each word plays for a quarter of a second


def reply_of(text: str) -> PlaybackLedger:
    ledger = PlaybackLedger()
    ledger.add_text(text)
    ledger.close_text()
    words = len(text.split())
    ledger.queue_audio(words * QUARTER, [SampleSpan(i * QUARTER, (i + 1) * QUARTER) for i in range(words)])
    return ledger


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, float]] = []

    def __call__(self, heard: str, t: float) -> None:
        self.lines.append((heard, t))


def test_the_stream_hears_when_the_reply_began_and_each_word_once_it_has_played() -> None:
    ledger, report, log = reply_of("Tomorrow starts dry."), ReplyReport(3, RATE), Log()
    begun_at = 2 * RATE  # the output's first sample reached the listener 2 s into the session

    first = report.played(ledger, 100, begun_at + 100, log)
    second = report.played(ledger, QUARTER + 10, begun_at + QUARTER + 10, log)
    again = report.played(ledger, QUARTER + 400, begun_at + QUARTER + 400, log)

    assert first == [OutputAudioStarted(3, 2.0)]
    assert second == [ResponseHeard(3, "Tomorrow", 1, 2.251)]
    assert again == []  # nothing new heard


def test_heard_progress_reaches_the_log_at_word_ends_at_most_twice_a_second() -> None:
    ledger, report, log = reply_of("one two three four five six"), ReplyReport(1, RATE), Log()

    for played in range(QUARTER, 6 * QUARTER + 1, QUARTER):  # each word's end, in turn
        report.played(ledger, played, played, log)

    assert log.lines == [("one", 0.25), ("one two three", 0.75), ("one two three four five", 1.25)]


def test_a_reply_played_in_full_reports_voice_to_voice_and_false_alarms_but_not_a_listeners_word() -> None:
    ledger = reply_of("Tomorrow starts dry.")
    report = ReplyReport(2, RATE, input_end=RATE)  # the user's question ended 1 s in
    report.played(ledger, 10, RATE + RATE // 2 + 10, Log())  # the answer began half a second later
    report.speech_over(RATE * 2)
    report.not_cut(listener=False)  # a cough
    report.speech_over(RATE * 3)
    report.not_cut(listener=True)  # "yeah": the user, listening

    done = report.done(ledger, 4.0)

    assert done.text == "Tomorrow starts dry."
    assert done.metrics == {"voice_to_voice_ms": 500.0, "false_barge_ins": 1}


def test_a_cut_reply_tells_the_words_heard_those_not_and_where_its_audio_stopped() -> None:
    ledger = reply_of("Tomorrow starts dry, then rain.")
    report = ReplyReport(4, RATE)
    report.played(ledger, 2 * QUARTER + 100, RATE + 2 * QUARTER + 100, Log())

    cut = report.interrupted(ledger, 2.0)

    assert (cut.heard, cut.unheard) == ("Tomorrow starts", "dry, then rain.")
    assert cut.audio_end_ms == 1506.2  # the engine-clock sample its last heard audio played at
