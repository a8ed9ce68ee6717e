"""The virtual room: a scripted conversation through the real pipeline, from WAV fixtures to a report."""
