"""The kiosk page has a handler for every event the stream may send it (tests/browser/test_page.py shows
what it does with one it does not know)."""

from __future__ import annotations

import re

from tests.support.paths import ROOT
from voice.client_events import EVENT_TYPES, SessionCreated

PAGE = ROOT / "voice" / "kiosk" / "page.html"


def handled_types(page: str) -> set[str]:
    """The event types the page's ``handlers`` object names."""
    found = re.search(r"const handlers = \{\n(.*?)\n\};", page, re.S)
    assert found is not None, "the page's handlers object is not where this test looks"
    return set(re.findall(r'^  "([a-z_.]+)"\(', found.group(1), re.M))


def test_the_page_has_a_handler_for_every_event_type_a_client_may_receive() -> None:
    handled = handled_types(PAGE.read_text(encoding="utf-8"))

    assert set(EVENT_TYPES) | {SessionCreated.type} == handled
