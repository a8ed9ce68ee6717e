"""What the assistant says aloud when a part fails it (a notice, never part of the conversation)."""

from __future__ import annotations

FAILURE_NOTICE = "Sorry, I could not reach the language model."
SPEECH_FAILURE_NOTICE = "Sorry, I could not make out what you said."
ASR_SERVER_NOTICE = "Sorry, I can't hear you right now: my speech server is not answering."
VOICE_FAILURE_NOTICE = "Sorry, I lost my voice for that answer."
