"""The barge-in engine: the turn state machine that drives listening, thinking and speaking (pure)."""
