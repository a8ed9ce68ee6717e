"""Speech model speed figures, printed as JSON.

- ``load_s``: building (loading and warming up) the bundled whisper tiny.en and piper joe-medium.
- ``asr_rtf_median``: whisper processing time / audio duration over piper-spoken utterances, with
  ``asr_latency_s_median`` the plain seconds per utterance (whisper pads every call to 30 s of audio, so
  short utterances have high factors); for the default beam (1) and for beam 5.
- ``tts_rtf_median``: piper time (word spans included) / audio duration over reply chunks.
- ``first_audio_ms``: from the first LLM delta to the first synthesized sample, the reply fed word by
  word to the SpeechChunker either instantly or one word every ``--delta-ms`` (virtual time for the
  stream, real time for synthesis); median over the replies.

Usage: python benchmarks/speech_rtf.py [--delta-ms 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from common.machine import cpu_facts

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.tts.chunker import SpeechChunker
from voice.tts.piper_voice import PiperSynthesizer

REPLIES = [
    "Tomorrow starts dry, then rain moves in from the west by noon. Expect twelve millimetres by evening.",
    "Sure, I can help with that. Preheat the oven to two hundred degrees and bake the bread for an hour.",
    "The library opens at nine and closes early on Sundays. During the summer it also closes on Mondays.",
    "Dr. Smith paid $3.50 at 10:30 a.m., e.g. for tea, and then walked along the river to the market.",
]


def seconds(action: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def chunks_of(reply: str) -> list[str]:
    chunker = SpeechChunker()
    return chunker.feed(reply) + chunker.flush()


def first_audio_ms(synthesizer: PiperSynthesizer, reply: str, delta_ms: float) -> float:
    """Stream time until the chunker hands out the first chunk, plus the real time to synthesize it."""
    chunker = SpeechChunker()
    words = reply.split(" ")
    for index, word in enumerate(words):
        chunks = chunker.feed(("" if index == 0 else " ") + word)
        if chunks:
            break
    else:
        chunks = chunker.flush()
    synthesis_s, _ = seconds(lambda: synthesizer.synthesize(chunks[0]))
    return index * delta_ms + synthesis_s * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delta-ms", type=float, default=40.0, help="pace of the LLM's word deltas")
    parser.add_argument("--rounds", type=int, default=3, help="times each measurement is repeated")
    args = parser.parse_args()

    whisper_load_s, whisper = seconds(WhisperTranscriber)
    piper_load_s, piper = seconds(PiperSynthesizer)
    whisper_beam5 = WhisperTranscriber(WhisperSettings(beam_size=5))

    tts_rtf = []
    utterances = []
    for _ in range(args.rounds):
        for reply in REPLIES:
            for chunk in chunks_of(reply):
                spent, synthesis = seconds(lambda text=chunk: piper.synthesize(text))
                tts_rtf.append(spent / synthesis.audio.duration_s)
                utterances.append(synthesis.audio)

    asr: dict[str, dict[str, float]] = {}
    for name, transcriber in (("beam_1", whisper), ("beam_5", whisper_beam5)):
        rtf, latency = [], []
        for audio in utterances:
            spent, _ = seconds(lambda audio=audio, t=transcriber: t.transcribe(audio))
            rtf.append(spent / audio.duration_s)
            latency.append(spent)
        asr[name] = {
            "asr_rtf_median": round(statistics.median(rtf), 3),
            "asr_latency_s_median": round(statistics.median(latency), 3),
        }

    first_audio: dict[str, list[float]] = {
        "instant": [first_audio_ms(piper, reply, 0.0) for _ in range(args.rounds) for reply in REPLIES],
        f"paced_{args.delta_ms:g}ms": [
            first_audio_ms(piper, reply, args.delta_ms) for _ in range(args.rounds) for reply in REPLIES
        ],
    }
    first_audio_median = {name: round(statistics.median(ms)) for name, ms in first_audio.items()}
    print(
        json.dumps(
            {
                "load_s": {"whisper": round(whisper_load_s, 2), "piper": round(piper_load_s, 2)},
                "asr": asr,
                "utterance_s_median": round(statistics.median(a.duration_s for a in utterances), 2),
                "tts_rtf_median": round(statistics.median(tts_rtf), 3),
                "first_audio_ms_median": first_audio_median,
                "cpu": cpu_facts(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
