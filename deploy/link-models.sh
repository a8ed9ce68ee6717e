#!/bin/sh
# Links the models voice bundles (whisper tiny.en, piper en_US-joe-medium, SmolLM2-135M) to where the model
# box's units read them: deploy/link-models.sh [FOLDER [PYTHON]]
# (defaults /var/lib/voice-box/models and /opt/voice/.venv/bin/python). Replace a link to serve another model.
set -eu
folder=${1:-/var/lib/voice-box/models}
python=${2:-/opt/voice/.venv/bin/python}
mkdir -p "$folder"
"$python" - "$folder" <<'PY'
import sys
from pathlib import Path

from voice.asr.whisper import bundled_model_dir
from voice.llm.embedded_server import bundled_gguf
from voice.tts.piper_voice import bundled_voice_path

folder = Path(sys.argv[1])
voice = bundled_voice_path()
links = {
    "whisper": bundled_model_dir(),
    "voice.onnx": voice,
    "voice.onnx.json": voice.with_name(voice.name + ".json"),
    "llm.gguf": bundled_gguf(),
}
for name, target in links.items():
    link = folder / name
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    print(f"{link} -> {target}")
PY
