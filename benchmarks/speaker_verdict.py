"""Which verdict keeps the conversation's speaker and refuses a television: a fixed threshold or one
relative to the speaker's own voice.

Each user voice is enrolled on its first clip, alone (the first question, asked in the quiet). Its other
clips are cut into 0.5 s and 1 s stretches with a television under them (a real reader of another voice,
reverberated: RT60 0.6 s, ``TV_UNDER_DB`` under the user's speech level), and the television's own
stretches of the same length stand for another voice talking over a reply. Three verdicts refuse a
stretch (call it another voice):

- ``fixed``: under the tuning pool's clip-pair equal-error threshold (0.66), whatever its length;
- ``per_length``: under the threshold where the tuning pool's stretches of that length refuse the user as
  often as they take the television;
- ``own``: more than a margin under what the speaker's own enrolment clip scores, cut into stretches of
  that length, against the print it made (how closely the encoder places this voice), the margin tuned on
  the tuning pool the same way.

The verdicts are tuned on the tuning voices (the two_cities reader, piper's joe, three espeak-ng accents,
each over another of them) and reported on held-out ones (the pocketsphinx card namer, moonshine's
Beckett and clone-test readers, the Austen reader, three held-out espeak-ng accents, each under a real
reader not their own): ``user_refused`` is the share of the user's stretches called another voice (the
user not heard), ``tv_taken`` the share of the television's taken as the speaker's (a reply paused).

Usage: python benchmarks/speaker_verdict.py [--out FILE] (about 2 minutes on 2 busy cores)
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import numpy as np
from common.machine import with_cpu
from speaker_embedding import (
    Clip,
    Samples,
    equal_error,
    level_db,
    pools,
    reverberated,
    rounded,
    say,
    stretches,
)

from voice.speaker.encoder import SpeakerEncoder
from voice.speaker.features import trim_long_silences
from voice.speaker.voiceprint import SAME_SPEAKER, Voiceprint

TV_UNDER_DB = 12.0
LENGTHS_S = (0.5, 1.0)


def voice_scores(
    encoder: SpeakerEncoder, user: list[Clip], tv: Samples, seconds: float
) -> tuple[float, list[float], list[float]]:
    """(the enrolment clip's own stretches' mean score, the user's stretches over the television, the
    television's stretches alone), each scored against a print of the user's first clip."""
    speech = trim_long_silences(np.concatenate([clip.samples for clip in user[1:]]))
    tv = tv * 10 ** ((level_db(speech) - TV_UNDER_DB - level_db(tv)) / 20)
    print_ = Voiceprint(encoder.embed)
    first = user[0].samples
    print_.add(first)
    own_first = trim_long_silences(first)
    own = [print_.score(own_first[w]).similarity for w in stretches(own_first, seconds)]
    users, tvs = [], []
    for n, window in enumerate(stretches(speech, seconds)):
        size = window.stop - window.start
        offset = (n * 16_000) % (len(tv) - size)
        users.append(print_.score(speech[window] + tv[offset : offset + size]).similarity)
    tvs = [print_.score(tv[window]).similarity for window in stretches(tv, seconds)]
    own_scores = [s for s in own if s is not None]
    return (
        float(np.mean(own_scores)) if own_scores else SAME_SPEAKER,
        [s for s in users if s is not None],
        [s for s in tvs if s is not None],
    )


def cases(
    encoder: SpeakerEncoder, by_voice: dict[str, list[Clip]], pairs: list[tuple[str, str]], seconds: float
) -> list[tuple[str, float, list[float], list[float]]]:
    rng = np.random.default_rng(47)
    out = []
    for user, tv_voice in pairs:
        tv = reverberated(np.concatenate([c.samples for c in by_voice[tv_voice]] * 2), rng)
        own, users, tvs = voice_scores(encoder, by_voice[user], tv, seconds)
        out.append((f"{user} over {tv_voice}", own, users, tvs))
    return out


def rates(cases_: list[tuple[str, float, list[float], list[float]]], refuse: Any) -> dict[str, Any]:
    """Per case and pooled: the user's stretches refused and the television's taken."""
    per_case = {}
    all_users, all_tvs = [], []
    for name, own, users, tvs in cases_:
        refused = [bool(refuse(s, own)) for s in users]
        taken = [not refuse(s, own) for s in tvs]
        per_case[name] = {"user_refused": float(np.mean(refused)), "tv_taken": float(np.mean(taken))}
        all_users += refused
        all_tvs += taken
    return {"user_refused": float(np.mean(all_users)), "tv_taken": float(np.mean(all_tvs)), "cases": per_case}


def tune_margin(cases_: list[tuple[str, float, list[float], list[float]]]) -> float:
    """The margin under the speaker's own score where the tuning cases refuse the user as often as they
    take the television."""
    same = [s - own for _, own, users, _ in cases_ for s in users]  # how far over their own (mostly under)
    different = [s - own for _, own, _, tvs in cases_ for s in tvs]
    _, threshold = equal_error(same, different)
    return -threshold


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average_before": os.getloadavg()[0]}
    say("synthesizing the voices")
    clips = pools()
    by_voice: dict[str, list[Clip]] = {}
    for clip in clips["tuning"] + clips["held_out"]:
        by_voice.setdefault(clip.voice, []).append(clip)
    tuning_voices = sorted({c.voice for c in clips["tuning"]})
    tuning_pairs = [(v, "two_cities" if v != "two_cities" else "piper-joe") for v in tuning_voices]
    # two clips at least: one enrolls, the other is heard over the television
    held_out_voices = sorted(v for v in {c.voice for c in clips["held_out"]} if len(by_voice[v]) > 1)
    held_out_pairs = [(v, "austen" if v != "austen" else "beckett") for v in held_out_voices]
    encoder = SpeakerEncoder()
    for seconds in LENGTHS_S:
        say(f"{seconds:g} s stretches")
        tuning = cases(encoder, by_voice, tuning_pairs, seconds)
        held_out = cases(encoder, by_voice, held_out_pairs, seconds)
        _, per_length = equal_error(
            [s for _, _, users, _ in tuning for s in users], [s for _, _, _, tvs in tuning for s in tvs]
        )
        margin = tune_margin(tuning)
        verdicts = {
            "fixed": lambda s, own: s < SAME_SPEAKER,
            "per_length": lambda s, own, t=per_length: s < t,
            "own": lambda s, own, m=margin: s < own - m,
        }
        result[f"{seconds:g}s"] = {
            "per_length_threshold": per_length,
            "own_margin": margin,
            "own_scores": {name: own for name, own, _, _ in tuning + held_out},
            "tuning": {name: rates(tuning, refuse) for name, refuse in verdicts.items()},
            "held_out": {name: rates(held_out, refuse) for name, refuse in verdicts.items()},
        }
    result["load_average_after"] = os.getloadavg()[0]
    text = json.dumps(rounded(with_cpu(result)), indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text + "\n")


if __name__ == "__main__":
    main()
