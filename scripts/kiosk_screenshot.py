"""Screenshots of the kiosk page for the README: a real `voice kiosk`, a stopped story, then a question.

Run from the checkout with the dev extra installed (selenium) and Debian's chromium:
    python scripts/kiosk_screenshot.py docs
It writes kiosk.png (1280x800, the kiosk screen) and kiosk-phone.png (390x844) into that folder.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 180


def start_kiosk(sessions: Path) -> tuple[subprocess.Popen[str], str]:
    kiosk = subprocess.Popen(
        [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--audio", "websocket",
         "--sessions", str(sessions)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert kiosk.stdout is not None
    for line in kiosk.stdout:
        found = re.search(r"(http://\S+/)", line)
        if found:
            return kiosk, found.group(1)
    raise SystemExit(f"voice kiosk ended without serving (exit {kiosk.wait()})")


def browser(width: int, height: int) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    return driver


def heard_words(driver: webdriver.Chrome) -> int:
    """Words shown of the reply in flight (a turn's entry made by its events, not by the snapshot)."""
    replies = driver.find_elements(By.CSS_SELECTOR, "#log .assistant[data-turn] .said")
    return len(replies[-1].text.split()) if replies else 0


def speaking_with(driver: webdriver.Chrome, words: int) -> None:
    WebDriverWait(driver, WAIT_S).until(
        lambda d: heard_words(d) >= words and d.find_element(By.ID, "state-label").text == "Speaking"
    )


def ask(driver: webdriver.Chrome, text: str, words: int) -> None:
    driver.find_element(By.ID, "text").send_keys(text, Keys.ENTER)
    WebDriverWait(driver, WAIT_S).until(lambda d: "data-turn" in d.page_source)
    speaking_with(driver, words)


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as sessions:
        kiosk, url = start_kiosk(Path(sessions))
        wide = browser(1280, 800)
        try:
            wide.get(url)
            ask(wide, "Tell me a short story about a fox.", 14)
            wide.find_element(By.ID, "stop").click()
            WebDriverWait(wide, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".cut-mark"))
            phone = browser(390, 844)
            try:
                phone.get(url)  # opened mid-conversation: the snapshot shows it
                ask(wide, "What will the weather be like tomorrow?", 10)
                wide.execute_script("document.activeElement.blur()")
                wide.save_screenshot(str(folder / "kiosk.png"))
                speaking_with(phone, 10)
                phone.save_screenshot(str(folder / "kiosk-phone.png"))
            finally:
                phone.quit()
        finally:
            wide.quit()
            kiosk.send_signal(signal.SIGTERM)
            kiosk.wait(timeout=30)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
