"""The LLM layer: the ``ChatModel`` port, an OpenAI-compatible client over httpx, and the embedded default."""
