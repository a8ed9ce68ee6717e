"""Speech synthesis: the `Synthesizer` port, its piper backend, and the chunker that feeds it LLM text."""
