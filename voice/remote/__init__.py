"""Speech on a shared server: Wyoming and OpenAI-compatible audio backends of the ASR and TTS ports."""
