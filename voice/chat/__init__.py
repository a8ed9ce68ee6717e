"""`voice chat`: the assistant on a real microphone and speaker."""
