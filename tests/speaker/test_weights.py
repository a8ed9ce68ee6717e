"""The GE2E weights come out of Resemblyzer's torch pickle without torch, and nothing else can."""

from __future__ import annotations

import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from voice.errors import ModelError
from voice.speaker.weights import bundled_weights_path, load_encoder_weights, read_legacy_torch_state

LEGACY_HEADER = (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True})


@pytest.mark.models
def test_the_wheel_s_checkpoint_gives_every_tensor_of_the_encoder() -> None:
    state = read_legacy_torch_state(bundled_weights_path())
    assert {name: array.shape for name, array in state.items() if name.startswith(("lstm", "linear"))} == {
        **{f"lstm.weight_ih_l{n}": (1024, 40 if n == 0 else 256) for n in range(3)},
        **{f"lstm.weight_hh_l{n}": (1024, 256) for n in range(3)},
        **{f"lstm.bias_{kind}_l{n}": (1024,) for kind in ("ih", "hh") for n in range(3)},
        "linear.weight": (256, 256),
        "linear.bias": (256,),
    }
    # the LSTM's tensors are views into one shared storage: each must come from its own offset
    assert not np.array_equal(state["lstm.weight_hh_l0"][:, :40], state["lstm.weight_ih_l0"])
    assert all(np.isfinite(array).all() and array.std() > 0.01 for array in state.values() if array.size > 1)


@pytest.mark.models
def test_the_two_biases_of_each_layer_are_summed() -> None:
    state = read_legacy_torch_state(bundled_weights_path())
    loaded = load_encoder_weights()
    np.testing.assert_array_equal(loaded.layers[2].bias, state["lstm.bias_ih_l2"] + state["lstm.bias_hh_l2"])


class _Runs:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.makedirs, (str(self.marker),))


def test_a_checkpoint_naming_any_other_global_is_refused_before_it_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    with path.open("wb") as file:
        for part in LEGACY_HEADER:
            pickle.dump(part, file, protocol=2)
        pickle.dump({"model_state": {"x": _Runs(marker)}}, file, protocol=2)
    with pytest.raises(ModelError, match=r"os\.makedirs"):
        read_legacy_torch_state(path)
    assert not marker.exists()


def test_a_zip_checkpoint_or_a_cut_file_is_a_clear_error(tmp_path: Path) -> None:
    zipped = tmp_path / "new.pt"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("archive/data.pkl", b"")
    with pytest.raises(ModelError, match="not a readable legacy torch checkpoint"):
        read_legacy_torch_state(zipped)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(bundled_weights_path().read_bytes()[:100_000])
    with pytest.raises(ModelError, match=r"cut short|not a readable"):
        read_legacy_torch_state(cut)
    with pytest.raises(ModelError, match="cannot read the speaker model"):
        read_legacy_torch_state(tmp_path / "absent.pt")


def test_without_the_wheel_the_error_says_how_to_install_it_without_torch() -> None:
    with pytest.raises(ModelError, match=r"pip install --no-deps 'Resemblyzer==0\.1\.4'"):
        bundled_weights_path("no-such-distribution-here")
