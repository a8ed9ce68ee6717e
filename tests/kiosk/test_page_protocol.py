"""What the talking page may send besides commands (``--audio websocket``): audio frames and its position."""

from __future__ import annotations

import pytest

from voice.kiosk.protocol import AudioFrame, BadFrame, PlaybackPosition, parse_command


def test_audio_frames_and_positions_are_commands_only_when_the_page_is_the_audio() -> None:
    assert parse_command(b"\x00\x01" * 320, audio=True) == AudioFrame(b"\x00\x01" * 320)
    assert parse_command('{"type": "playback.position", "samples": 4800}', audio=True) == PlaybackPosition(
        4800
    )
    with pytest.raises(BadFrame, match="takes none"):
        parse_command(b"\x00\x01" * 320)
    with pytest.raises(BadFrame, match=r"unknown command type 'playback\.position'"):
        parse_command('{"type": "playback.position", "samples": 4800}')


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\x00\x01\x02",
        '{"type": "playback.position"}',
        '{"type": "playback.position", "samples": -1}',
        '{"type": "playback.position", "samples": 1.5}',
        '{"type": "playback.position", "samples": true}',
        '{"type": "playback.position", "samples": "10"}',
    ],
)
def test_a_malformed_audio_frame_or_position_is_a_bad_frame(frame: str | bytes) -> None:
    with pytest.raises(BadFrame):
        parse_command(frame, audio=True)
