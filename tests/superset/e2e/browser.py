"""Drive headless Chromium through Superset's pages; run by the Superset virtualenv's Python.

Superset 6.1 brings Selenium, so this script runs there, not in the test
session. It reads a JSON job on stdin::

    {"base": "http://127.0.0.1:PORT", "username": ..., "password": ...,
     "chromium": "/usr/bin/chromium", "chromedriver": "/usr/bin/chromedriver",
     "pages": [{"name": ..., "path": ..., "expect": ["19.75", ...],
                "click": ["Run"], "screenshot": "/abs/file.png"}],
     "timeout": 90}

logs in through the login form, opens each page, clicks the buttons or tabs whose
texts ``click`` lists (SQL Lab's *Run*), waits until every ``expect``
string is in the rendered text of the page (``document.body.innerText``) and
saves a screenshot. It prints one JSON object: per page, whether every string
was found, the missing ones and the page text. The browser and its driver are
always quit, whatever happens.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

#: Headless, as root in a container (no sandbox), no GPU, and nothing that
#: reaches out to the network on its own.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--window-size=1400,1000",
)


def _text(driver: webdriver.Chrome) -> str:
    return str(driver.execute_script("return document.body ? document.body.innerText : ''"))


def _wait(driver: webdriver.Chrome, expect: list[str], timeout: float) -> tuple[bool, str]:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = _text(driver)
        if all(item in text for item in expect):
            return True, text
        time.sleep(0.5)
    return False, text


def _login(driver: webdriver.Chrome, job: dict[str, Any]) -> None:
    driver.get(job["base"] + "/login/")
    deadline = time.monotonic() + job["timeout"]
    while not driver.find_elements(By.CSS_SELECTOR, "input[type=password]"):
        if time.monotonic() > deadline:
            raise TimeoutError("the login form did not appear:\n" + _text(driver)[:2000])
        time.sleep(0.3)
    user = driver.find_element(By.CSS_SELECTOR, "input#username, input[name=username]")
    user.send_keys(job["username"])
    password = driver.find_element(By.CSS_SELECTOR, "input[type=password]")
    password.send_keys(job["password"], Keys.ENTER)
    while "/login" in driver.current_url:
        if time.monotonic() > deadline:
            raise TimeoutError("the login did not leave /login/:\n" + _text(driver)[:2000])
        time.sleep(0.3)


def _click(driver: webdriver.Chrome, label: str, timeout: float) -> None:
    """Click the first enabled button or tab whose visible text is ``label``."""
    xpath = f"//*[self::button or @role='button' or @role='tab'][normalize-space(.)='{label}']"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for element in driver.find_elements(By.XPATH, xpath):
            try:
                if element.is_displayed() and element.is_enabled():
                    element.click()
                    return
            except WebDriverException:  # re-rendered or covered: look again
                break
        time.sleep(0.5)
    raise TimeoutError(f"no button or tab {label!r} appeared:\n" + _text(driver)[:2000])


def main() -> int:
    job = json.load(sys.stdin)
    options = webdriver.ChromeOptions()
    options.binary_location = job["chromium"]
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(job["chromedriver"]))
    results: dict[str, Any] = {}
    try:
        driver.set_page_load_timeout(job["timeout"])
        _login(driver, job)
        for page in job["pages"]:
            driver.get(job["base"] + page["path"])
            for label in page.get("click") or ():
                _click(driver, label, job["timeout"])
            found, text = _wait(driver, page["expect"], job["timeout"])
            time.sleep(1.0)  # let the chart's animation settle before the picture
            driver.save_screenshot(page["screenshot"])
            results[page["name"]] = {
                "found": found,
                "missing": [item for item in page["expect"] if item not in text],
                "text": text,
                "url": driver.current_url,
            }
    finally:
        driver.quit()
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
