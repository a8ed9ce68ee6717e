"""A small OpenAI-compatible speech server for the tests: ``POST /v1/audio/speech`` with the bundled voice.

The registry holds no OpenAI-compatible TTS server that runs offline with a piper voice, so this one stands
in. It answers ``response_format=pcm`` with the voice's raw 16-bit PCM at its own 22050 Hz, one chunk per
sentence as piper makes it (HTTP chunked transfer). Run: ``python -m tests.remote.piper_speech_server PORT``.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from piper import PiperVoice

from voice.tts.piper_voice import bundled_voice_path


class SpeechHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    voice: Any = None

    def do_POST(self) -> None:
        if self.path != "/v1/audio/speech":
            self.send_error(404)
            return
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        if request.get("response_format") != "pcm" or not request.get("input"):
            self.send_error(400)
            return
        self.send_response(200)
        self.send_header("Content-Type", "audio/pcm")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for sentence in self.voice.synthesize(request["input"]):
            data = sentence.audio_int16_bytes
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    SpeechHandler.voice = PiperVoice.load(bundled_voice_path())
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), SpeechHandler).serve_forever()


if __name__ == "__main__":
    main()
