"""Voices in the virtual room that are not the user's: a television across the room, people chatting."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.sim.room import reverberated, under

REAL = AUDIO / "real"
TELEVISION_READER = ("austen_870", "austen_880", "austen_890", "austen_920", "austen_930")  # a real reader


def television(folder: Path, user: Path, under_db: float = 12.0) -> Path:
    """A WAV of the television: a real reader's recording, reverberated and talking on without a pause
    between clips, ``under_db`` under the speech level of the ``user`` WAV."""
    reading = np.concatenate([read_wav(REAL / f"{name}.wav").samples for name in TELEVISION_READER])
    path = folder / "television.wav"
    write_wav(path, AudioBlock(under(reverberated(reading), read_wav(user).samples, under_db), ENGINE_RATE))
    return path


def chat(folder: Path, level_of: Path, gap_s: float = 0.3) -> Path:
    """A WAV of two people chatting near the mic (real voices, neither the user's), taking turns
    ``gap_s`` apart, at the speech level of ``level_of``'s WAV."""
    turns = ["beckett-01", "goforward", "beckett-02", "cards_5", "beckett-03"]
    gap = np.zeros(round(gap_s * ENGINE_RATE), np.float32)
    spoken = np.concatenate(
        [part for name in turns for part in (read_wav(REAL / f"{name}.wav").samples, gap)]
    )
    path = folder / "chat.wav"
    write_wav(path, AudioBlock(under(spoken, read_wav(level_of).samples, 0.0), ENGINE_RATE))
    return path
