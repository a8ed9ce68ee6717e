"""Speech recognition: the `Transcriber` port and its faster-whisper backend."""
