"""Whose voice it is: the GE2E speaker embedding (Resemblyzer's weights, run without torch) and a voiceprint.

``weights`` reads the encoder from the Resemblyzer wheel, ``features`` makes its mel frames, ``network``
runs it (onnxruntime or numpy), ``encoder`` embeds a stretch of speech, ``voiceprint`` keeps the
conversation's speaker and scores new stretches against it. The runtime keeps the print and answers the
engine's JudgeSpeaker (docs/architecture.md §10).
"""
