#!/usr/bin/env bash
# Installs everything voice and its tests need on a fresh Debian 12 machine (run as root, or with sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# PortAudio for sounddevice; espeak-ng for piper's phonemes and fixtures; sox and PulseAudio for audio tests.
$SUDO apt-get install -y -qq --no-install-recommends \
    libportaudio2 espeak-ng sox pulseaudio alsa-utils libasound2-plugins >/dev/null

# llama.cpp builds from source; a native (-march=native) build crashes at the first decode on these VMs.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
    python -m pip install --quiet 'llama-cpp-python[server]>=0.3.7'
python -m pip install --quiet -e '.[models,llm,dev]'
