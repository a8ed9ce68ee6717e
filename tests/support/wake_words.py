"""Wake words said by voices the wake models were not trained or tuned on here: piper's bundled voice
and espeak-ng's, each sentence padded with half a second of silence either side."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav, write_wav
from voice.tts.piper_voice import PiperSynthesizer

PAD = ENGINE_RATE // 2
# each bundled model's words, as a person says them before a question
SAID = {"okay_nabu": "Okay Nabu", "hey_jarvis": "Hey Jarvis", "hey_mycroft": "Hey Mycroft", "alexa": "Alexa"}
QUESTION = "what's the time?"


def padded(samples: Samples) -> Samples:
    silence = np.zeros(PAD, np.float32)
    return np.concatenate([silence, np.asarray(samples, np.float32), silence])


def piper_says(synthesizer: PiperSynthesizer, text: str) -> Samples:
    return padded(synthesizer.synthesize(text).audio.samples)


def espeak_says(text: str, voice: str, speed: int = 175) -> Samples:
    """``text`` in espeak-ng's ``voice`` at ``speed`` words a minute, at 16 kHz."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "said.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text], check=True)
        return padded(read_wav(path).samples)


def save(samples: Samples, path: Path) -> Path:
    write_wav(path, AudioBlock(samples, ENGINE_RATE))
    return path
