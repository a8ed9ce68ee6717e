"""Tools the assistant can call: MCP servers named in the config, offered to the LLM by the turn rules."""
