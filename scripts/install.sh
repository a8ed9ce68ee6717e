#!/usr/bin/env bash
# Installs voice and everything its tests need on a fresh Debian 12 machine (run as root, or with sudo),
# into .venv beside this checkout, built from the system /usr/bin/python3 (PEP 668 forbids installing into it).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# venv for the project's own Python, and a compiler for llama.cpp; PortAudio for sounddevice; espeak-ng for
# piper's phonemes and fixtures; sox and PulseAudio for audio tests; libspeexdsp for the linear echo canceller;
# chromium and its driver for the kiosk page's browser tests; prometheus (and promtool) for the metrics tests,
# which start their own on loopback (the package's own service is not needed: policy may keep it stopped);
# qemu-user and debootstrap for scripts/as-avx2-only and scripts/as-arm64, which run the tests as an AVX2-only
# or an ARM64 CPU would.
$SUDO apt-get install -y -qq --no-install-recommends \
    python3-venv python3-dev build-essential cmake \
    libportaudio2 espeak-ng sox pulseaudio alsa-utils libasound2-plugins libspeexdsp1 \
    chromium chromium-driver prometheus qemu-user debootstrap >/dev/null

[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
PY=.venv/bin/python
$PY -m pip install --quiet --upgrade pip
# llama.cpp builds from source (about 4 min on 2 cores); a native (-march=native) build crashes at the first decode here.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
    $PY -m pip install --quiet 'llama-cpp-python[server]>=0.3.7'
$PY -m pip install --quiet -e '.[models,llm,dev]'
# only for the Smart Turn model file it ships: pipecat's own dependencies (torch, ...) are never used
$PY -m pip install --quiet --no-deps 'pipecat-ai==1.14.0'
# only for the GE2E speaker encoder's weights (pretrained.pt), read without torch: its torch, librosa and scipy never are
$PY -m pip install --quiet --no-deps 'Resemblyzer==0.1.4'
# the Wyoming wake word server pins wyoming==1.2.0 and numpy 1: its own venv, for the wyoming:// wake word's tests
WAKE_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/voice/wyoming-openwakeword-1.8.2"
[ -x "$WAKE_VENV/bin/python" ] || { /usr/bin/python3 -m venv "$WAKE_VENV" &&
    "$WAKE_VENV/bin/python" -m pip install --quiet 'wyoming-openwakeword==1.8.2' 'numpy<2'; }
echo "installed into .venv: activate it with '. .venv/bin/activate'"
