"""One config file: TOML read and checked, layered under the environment and flags, shown and templated."""
