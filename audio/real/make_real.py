"""Make the real-voice set in ``audio/real/``: recordings from registry packages cut into utterances.

Run by hand (``python audio/real/make_real.py``), never at test time: it fetches two packages with pip
(``moonshine-voice`` 0.1.5's wheel and ``pocketsphinx`` 5.1.1's source), takes their recordings, cuts
them at the silences listed in ``CUTS`` (found once by the level of 10 ms frames: see README.md),
resamples them to 16 kHz mono 16-bit and writes each utterance with ``manifest.json``. The recordings
keep their own levels; only the rate changes. What each reference is and how it was made is in
``REFERENCES`` and README.md: whisper's output is never one.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.audio.block import ENGINE_RATE
from voice.audio.resample import resample
from voice.audio.wav import read_wav, write_pcm16

HERE = Path(__file__).resolve().parent
MOONSHINE = "moonshine-voice==0.1.5"
POCKETSPHINX = "pocketsphinx==5.1.1"
MOONSHINE_LICENCE = "MIT (the moonshine-voice wheel, Copyright (c) 2025 Moonshine AI)"
POCKETSPHINX_LICENCE = "BSD-2-Clause (pocketsphinx, Copyright (c) 1999-2016 Carnegie Mellon University)"
LIBRIVOX = "public domain (a LibriVox recording of a public-domain book)"


@dataclass(frozen=True)
class Source:
    """One recording: where it is in its package, its pool, its licence and what it is."""

    package: str
    member: str  # path inside the wheel or source archive
    pool: str  # "tuning" or "held_out" (TEAM.md's voice pools)
    licence: str
    what: str
    raw_rate: int | None = None  # a headerless 16-bit mono file at this rate


SOURCES = {
    "two_cities": Source(
        MOONSHINE,
        "moonshine_voice/assets/two_cities.wav",
        "tuning",
        f"{LIBRIVOX}; redistributed in the wheel under {MOONSHINE_LICENCE}",
        "a LibriVox reader reading the opening of Dickens' A Tale of Two Cities (real voice)",
    ),
    "endgame": Source(
        MOONSHINE,
        "moonshine_voice/assets/endgame_nagg_nell.wav",
        "tuning",
        MOONSHINE_LICENCE,
        "NOT a person: lines of Beckett's Endgame synthesized by ZipVoice (two neural voices) for "
        "moonshine's diarization tests; unfamiliar speech, but synthetic",
    ),
    "beckett": Source(
        MOONSHINE,
        "moonshine_voice/assets/beckett.wav",
        "held_out",
        MOONSHINE_LICENCE,
        "one voice reading Beckett's 'Ever tried. Ever failed...' (Worstward Ho); who is not documented",
    ),
    "clone_test": Source(
        MOONSHINE,
        "moonshine_voice/assets/clone-test.wav",
        "held_out",
        MOONSHINE_LICENCE,
        "a 4 s clip of one voice that moonshine uses as a voice-cloning reference; no text is published",
    ),
    **{
        f"cards_{n}": Source(
            POCKETSPHINX,
            f"pocketsphinx-5.1.1/test/data/cards/00{n}.wav",
            "held_out",
            POCKETSPHINX_LICENCE,
            "a person naming playing cards, from pocketsphinx's grammar tests (real voice)",
        )
        for n in range(1, 6)
    },
    "goforward": Source(
        POCKETSPHINX,
        "pocketsphinx-5.1.1/test/data/goforward.raw",
        "held_out",
        POCKETSPHINX_LICENCE,
        "a person saying a robot command, pocketsphinx's classic test utterance (real voice)",
        raw_rate=16000,
    ),
    **{
        f"austen_{n}": Source(
            POCKETSPHINX,
            f"pocketsphinx-5.1.1/test/data/librivox/sense_and_sensibility_01_austen_64kb-0{n}.wav",
            "held_out",
            f"{LIBRIVOX}; shipped in pocketsphinx under {POCKETSPHINX_LICENCE}",
            "a LibriVox reader reading Austen's Sense and Sensibility, chapter 1 (real voice)",
        )
        for n in (870, 880, 890, 920, 930)
    },
}

# Cut points in seconds of each source, at the middle of its silences (frames 25 % of the way from the
# quietest 5 % of frames to the loudest 10 %, for 150 ms or more); None: the whole recording.
CUTS: dict[str, list[float] | None] = {
    "two_cities": [
        0.90,
        2.90,
        4.78,
        6.40,
        8.51,
        10.53,
        13.12,
        14.96,
        17.12,
        18.85,
        20.85,
        24.32,
        26.30,
        28.68,
        32.60,
        36.76,
        42.20,
    ],
    "endgame": [
        0.0,
        1.21,
        2.15,
        3.58,
        4.52,
        8.42,
        11.68,
        14.34,
        17.29,
        19.08,
        20.10,
        22.16,
        23.44,
        27.68,
        28.28,
    ],
    "beckett": [0.0, 3.15, 6.20, 9.96],
}

DICKENS = "published text (Project Gutenberg #98, A Tale of Two Cities, Book 1 chapter 1), split at the cuts"
ENDGAME = "the text moonshine's scripts/generate-diarization-test-audio.py gave the synthesizer"
BECKETT = "published text (Beckett, Worstward Ho, 1983), split at the cuts"
CARDS = "pocketsphinx's test/data/cards/cards.transcription (made by its authors, who recorded it)"
AUSTEN = "pocketsphinx's test/data/librivox/*.txt (made by its authors; keeps the reader's repeated 'a')"
GOFORWARD = "pocketsphinx's README and tests: 'go forward ten meters' (its authors' text for this recording)"

ENDGAME_LINES = [
    "Do you hear me?",
    "Yes.",
    "Do you hear me?",
    "Yes.",
    "We laugh less heartily, so we have still that resource.",
    "We laugh less heartily, so we have still that resource?",
    "No, not heartily, just less heartily.",
    "Ah that's a good story, ah that's a good story.",
    "What are you talking about?",
    "Laughing.",
    "I thought you were in pain.",
    "Not now.",
    "Do you remember the day I went and fetched you from that ditch?",
    "No.",
]

# (text, how the reference was made, the assistant's words before it, if the situation has any)
REFERENCES: dict[str, list[tuple[str, str, str]]] = {
    "two_cities": [
        (text, DICKENS, "")
        for text in (
            "It was the best of times,",
            "it was the worst of times,",
            "it was the age of wisdom,",
            "it was the age of foolishness,",
            "it was the epoch of belief,",
            "it was the epoch of incredulity,",
            "it was the season of Light,",
            "it was the season of Darkness,",
            "it was the spring of hope,",
            "it was the winter of despair,",
            "we had everything before us, we had nothing before us,",
            "we were all going direct to Heaven,",
            "we were all going direct the other way--",
            "in short, the period was so far like the present period,",
            "that some of its noisiest authorities insisted on its being received,",
            "for good or for evil, in the superlative degree of comparison only.",
        )
    ],
    "endgame": [
        (text, ENDGAME, before) for before, text in zip(["", *ENDGAME_LINES[:-1]], ENDGAME_LINES, strict=True)
    ],
    "beckett": [
        ("Ever tried. Ever failed.", BECKETT, ""),
        ("No matter. Try again.", BECKETT, ""),
        ("Fail again. Fail better.", BECKETT, ""),
    ],
    # No published text: kept for what needs no reference (nothing invented, latency), not for WER.
    "clone_test": [("", "none: no text of this clip is published, and a recogniser's is no reference", "")],
    "cards_1": [("ten of clubs", CARDS, "Pick a card.")],
    "cards_2": [("four queen of clubs", CARDS, "Pick a card.")],
    "cards_3": [("seven of clubs", CARDS, "Pick a card.")],
    "cards_4": [("five five", CARDS, "Pick a card.")],
    "cards_5": [("eight of spades four of clubs seven of hearts", CARDS, "Pick three cards.")],
    "goforward": [("go forward ten meters", GOFORWARD, "")],
    "austen_870": [
        (
            "and mister john dashwood had then leisure to consider how much there might be prudently in his "
            "power to do for them",
            AUSTEN,
            "",
        )
    ],
    "austen_880": [("he was not an ill disposed young man", AUSTEN, "")],
    "austen_890": [("unless to be rather cold hearted and rather selfish is to be ill disposed", AUSTEN, "")],
    "austen_920": [
        (
            "had he married a more a amiable woman he might have been made still more respectable "
            "than he was",
            AUSTEN,
            "",
        )
    ],
    "austen_930": [("he might even have been made amiable himself", AUSTEN, "")],
}


def fetched(folder: Path) -> dict[str, Path]:
    """The two packages, downloaded with pip into ``folder``."""
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(folder)]
    subprocess.run([*pip, MOONSHINE], check=True)
    subprocess.run([*pip, "--no-binary", ":all:", POCKETSPHINX], check=True)
    return {
        MOONSHINE: next(folder.glob("moonshine_voice-0.1.5-*.whl")),
        POCKETSPHINX: next(folder.glob("pocketsphinx-5.1.1.tar.gz")),
    }


def member_bytes(archive: Path, member: str) -> bytes:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            return wheel.read(member)
    with tarfile.open(archive) as tar:
        extracted = tar.extractfile(member)
        if extracted is None:
            raise SystemExit(f"{member} is not a file in {archive}")
        return extracted.read()


def recording(source: Source, archive: Path, folder: Path) -> np.ndarray:
    """The source's samples at the engine's rate."""
    data = member_bytes(archive, source.member)
    if source.raw_rate is not None:
        samples = np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0
        rate = source.raw_rate
    else:
        path = folder / Path(source.member).name
        path.write_bytes(data)
        block = read_wav(path, rate=None)
        samples, rate = block.samples.astype(np.float64), block.rate
    return samples if rate == ENGINE_RATE else resample(samples, rate, ENGINE_RATE, quality="VHQ")


def main() -> None:
    entries = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        archives = fetched(folder)
        for name, source in SOURCES.items():
            samples = recording(source, archives[source.package], folder)
            whole = len(samples) / ENGINE_RATE
            cuts = CUTS.get(name) or [0.0, whole]
            references = REFERENCES[name]
            if len(references) != len(cuts) - 1:
                raise SystemExit(f"{name}: {len(cuts) - 1} cuts but {len(references)} references")
            for index, ((start, end), (text, made, context)) in enumerate(
                zip(itertools.pairwise(cuts), references, strict=True), start=1
            ):
                file = f"{name}.wav" if len(references) == 1 else f"{name}-{index:02d}.wav"
                piece = samples[round(start * ENGINE_RATE) : round(min(end, whole) * ENGINE_RATE)]
                write_pcm16(HERE / file, piece.astype(np.float32), ENGINE_RATE)
                entries.append(
                    {
                        "file": file,
                        "text": text,
                        "reference": made,
                        "context": context,
                        "pool": source.pool,
                        "source": f"{source.package}: {source.member}",
                        "span_s": [round(start, 2), round(min(end, whole), 2)],
                        "licence": source.licence,
                        "what": source.what,
                    }
                )
    manifest = {
        "version": 1,
        "rate": ENGINE_RATE,
        "made_by": "audio/real/make_real.py",
        "fields": {
            "file": "16 kHz mono 16-bit WAV beside this manifest",
            "text": "the reference transcript ('' where none can be written: not scored)",
            "reference": "how the reference was made",
            "context": "what the other side said just before, where the recording's situation has it",
            "pool": "tuning or held_out (TEAM.md's voice pools)",
            "source": "the registry package and the file in it",
            "span_s": "where the utterance lies in that file, in seconds",
        },
        "utterances": entries,
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(entries)} utterances to {HERE}")


if __name__ == "__main__":
    main()
