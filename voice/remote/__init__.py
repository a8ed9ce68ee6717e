"""Carrying audio to speech servers and back: Wyoming links, OpenAI-compatible endpoints, their URLs,
limits and failures. Which servers there are is voice/speech_backends.py's table."""
