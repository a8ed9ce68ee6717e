"""Tools the assistant can call: MCP servers named in the config, offered to the LLM and run by the engine's rules."""
