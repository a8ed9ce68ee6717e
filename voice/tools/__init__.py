"""Tools the assistant can call: the config's MCP servers, offered to the LLM, run by the engine's rules."""
