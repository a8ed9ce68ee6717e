"""Audio: blocks on one sample clock, WAV I/O, resampling, VAD, echo cancellation, playback, devices."""
