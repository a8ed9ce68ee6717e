"""The commented config file `voice config init` writes: every key, its meaning, its default or an example."""

from __future__ import annotations

from voice.config.keys import KEYS, SECRETS, SECTIONS, Key
from voice.config.toml_text import toml_value

HEADER = """\
# voice's config file. Every key is optional: uncomment a line (remove the leading #) to set it.
# Environment variables override this file and flags override both; `voice config show` prints what is in
# effect and where each value came from. Secrets are never read from here, only from the environment:
# {secrets}.
"""

MCP = """\
[mcp.servers]
# Tools from MCP servers, one [mcp.servers.NAME] table each: a command started over stdio (with an
# optional env table) or a streamable-HTTP url, whose header values come from the environment variables
# named in headers_env.
# Optional: tools (offer only these) and timeout_s (seconds a call may take, default 30).
#[mcp.servers.files]
#command = ["python", "-m", "my_files_server"]
#env = {ROOT = "/srv/files"}
#tools = ["read_file", "list_files"]
#timeout_s = 30
#[mcp.servers.search]
#url = "http://127.0.0.1:9000/mcp"
#headers_env = {Authorization = "SEARCH_AUTHORIZATION"}
"""


def render_template() -> str:
    secrets = ", ".join(f"{variable} ({key})" for key, variable in SECRETS.items())
    parts = [HEADER.format(secrets=secrets)]
    for section in SECTIONS:
        parts.append(f"\n[{section}]\n")
        parts.extend(_entry(key) for key in KEYS if key.section == section)
    parts.append("\n" + MCP)
    return "".join(parts)


def _entry(key: Key) -> str:
    overrides = [f"env {key.env}"] if key.env else []
    overrides += [f"flag {key.flag}"] if key.flag else []
    also = f" [{', '.join(overrides)}]" if overrides else ""
    value = key.example if key.example is not None else key.default
    return f"# {key.help}{also}\n#{key.field} = {toml_value(value)}\n"
