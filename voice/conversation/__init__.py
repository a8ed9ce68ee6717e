"""The conversation core: items, the rules of a turn, the playback ledger and the session log (pure)."""
