"""Every scenario gives exactly the outputs recorded before the driver core was refactored.

A difference is a change of behaviour: the report, the event stream, the session log and the WAVs
must stay identical. tests/sim/golden_outputs.py says how to re-record when a change is intended.
"""

from __future__ import annotations

import pytest

from tests.sim.conftest import SCENARIOS, RunScenario
from tests.sim.golden_outputs import outputs_of, recorded


@pytest.mark.models
@pytest.mark.parametrize("name", [path.stem for path in SCENARIOS])
def test_scenario_gives_the_recorded_outputs(name: str, simulated: RunScenario) -> None:
    _, out = simulated(name)
    now, then = outputs_of(out), recorded(name)

    assert now["report"] == then["report"]
    assert now["events"] == then["events"]
    assert now["session"] == then["session"]
    assert now["sha256"] == then["sha256"]
