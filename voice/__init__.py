"""voice: a local, private voice assistant you can talk over."""

__version__ = "0.1.0"
