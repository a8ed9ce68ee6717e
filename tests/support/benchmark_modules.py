"""A benchmark module for a test (benchmarks/ is no package: its scripts import common.* by name)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def benchmark_module(name: str) -> ModuleType:
    """benchmarks/NAME.py as a module, loaded once; a dotted NAME is a module of a folder (``common.x``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, BENCHMARKS.joinpath(*name.split(".")).with_suffix(".py")
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"no benchmark module {name} in {BENCHMARKS}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module
