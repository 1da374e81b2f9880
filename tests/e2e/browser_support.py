"""A real browser for the report's tests: Debian's Chromium, headless, driven by selenium through chromedriver.

Started as the machine notes say Chromium works here as root with no network: --no-sandbox, --headless,
--disable-gpu, --disable-dev-shm-usage, an empty --user-data-dir, and no background networking, component updates,
first-run work or sync (without them Chromium keeps trying to reach hosts it cannot). Selenium is kept offline too:
the driver and browser paths are given, so it never looks for a driver to download.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-quic", "--window-size=1200,900")


@contextmanager
def chromium(profile: Path):
    """A selenium Chrome driver on Debian's chromium with an empty profile folder ``profile``; quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in CHROMIUM_FLAGS + (f"--user-data-dir={profile}",):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver) -> list[str]:
    """The browser console's messages of level SEVERE since the last call (errors, blocked loads, CSP violations)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def open_page(driver, path: Path) -> None:
    """Load ``path`` as a file:// page and wait until the document is complete."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(Path(path).resolve().as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def text(driver, css: str) -> str:
    """The rendered text of the first element matching ``css``."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css).text


def all_of(driver, css: str) -> list:
    """Every element matching ``css``."""
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, css)
