"""The page at GET / in a real browser: Debian's headless Chromium driven by Selenium, against
the real server on 127.0.0.1 with the demo weights (random: what plays is noise, not speech).
One browser for the module; short texts; each test opens the page afresh."""

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import numpy as np
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.limits import ServeLimits
from chattts_studio.core.serve.page import PAGE_FILES, PAGE_HEADERS
from chattts_studio.core.serve.running import serving_on_loopback
from chattts_studio.core.voices.speakers import SpeakerLibrary

# Debian's chromium and chromium-driver (make test installs them)
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
MAX_INPUT = 40
TEXT = "你好。"
WAIT = 60  # seconds for anything the page does (a request on the demo model takes about 1)
# Default sampling on the page: a body carries only what the user changed.
PLAIN_FIELDS = {"model", "input", "voice", "response_format"}


@dataclass
class Served:
    url: str
    server: SpeechServer


@pytest.fixture(scope="module")
def served(engine: Engine) -> Iterator[Served]:
    batcher = Batcher(engine, slots=2, max_waiting=8)
    server = SpeechServer(engine, batcher, limits=ServeLimits(max_input_chars=MAX_INPUT))
    with serving_on_loopback(server, batcher) as port:
        yield Served(f"http://127.0.0.1:{port}", server)


@pytest.fixture(scope="module")
def browser_audio(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser's sound goes: a virtual ALSA device of its own that writes what it
    plays to files (as tests/conftest.py's, which the GUI tests read: kept apart from it)."""
    folder = tmp_path_factory.mktemp("browser-audio")
    (folder / "asound.conf").write_text(
        'pcm.!default { type plug; slave { pcm "capfile"; format FLOAT_LE } }\n'
        "pcm.capfile { type file; slave.pcm { type null }\n"
        f'  file "{folder}/out_%r_%c.raw"; format "raw" }}\n'
    )
    return folder


@pytest.fixture(scope="module")
def browser(browser_audio: Path) -> Iterator[WebDriver]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail(
            "The page's tests need Debian's chromium and chromium-driver: make test installs them"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",  # the tests may run as root, where Chromium's sandbox refuses to start
        "--autoplay-policy=no-user-gesture-required",  # play() after a fetch, no click needed
        "--disable-gpu",
        "--window-size=1000,1400",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SE_OFFLINE", "1")  # Selenium Manager never downloads a driver or browser
        env.setenv("ALSA_CONFIG_PATH", str(browser_audio / "asound.conf"))
        service = Service(str(CHROMEDRIVER), env=dict(os.environ))
        driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: WebDriver, served: Served) -> Iterator[WebDriver]:
    """The page opened afresh (no key kept from an earlier test), its voices loaded; after the
    test, no Content-Security-Policy violation in the browser's console."""
    browser.get(f"{served.url}/health")  # same origin: its sessionStorage can be cleared
    browser.execute_script("sessionStorage.clear(); localStorage.clear();")
    browser.get_log("browser")  # drop earlier entries
    browser.get(f"{served.url}/")
    _until(browser, "return document.body.dataset.voices === 'loaded'")
    yield browser
    violations = [
        e["message"] for e in browser.get_log("browser") if "Content Security" in e["message"]
    ]
    assert violations == []


def _until(driver: WebDriver, script: str, timeout: float = WAIT) -> Any:
    """The script's first truthy answer; a timeout says what the page showed then."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(
            lambda d: d.execute_script(script)
        )
    except TimeoutException:
        shown = driver.execute_script(
            "return [document.getElementById('status').textContent, "
            "document.getElementById('error').textContent]"
        )
        raise AssertionError(f"waited {timeout} s for: {script}; the page said {shown}") from None


def _text(driver: WebDriver, element: str) -> str:
    return str(driver.find_element(By.ID, element).text)


def _record_requests(driver: WebDriver) -> None:
    """From now on the page's speech requests' bodies are kept in window.sentBodies, and the
    blob behind each URL it makes in window.blobs (the test cannot fetch a blob: URL itself:
    the page's policy allows connections to its own origin only)."""
    driver.execute_script(
        """
        window.sentBodies = [];
        window.blobs = {};
        const realFetch = window.fetch;
        window.fetch = (url, init) => {
          if (String(url).endsWith('/v1/audio/speech')) sentBodies.push(JSON.parse(init.body));
          return realFetch(url, init);
        };
        const realCreate = URL.createObjectURL;
        URL.createObjectURL = (blob) => {
          const url = realCreate(blob);
          blobs[url] = blob;
          return url;
        };
        """
    )


def _sent(driver: WebDriver) -> list[dict[str, Any]]:
    return list(driver.execute_script("return window.sentBodies"))


def _speak(driver: WebDriver, text: str, fmt: str = "wav") -> None:
    field = driver.find_element(By.ID, "text")
    field.clear()
    if text:
        field.send_keys(text)
    Select(driver.find_element(By.ID, "format")).select_by_value(fmt)
    driver.execute_script("delete document.getElementById('player').dataset.state")
    driver.find_element(By.ID, "synthesize").click()


def _played_to_the_end(driver: WebDriver) -> None:
    _until(driver, "return document.getElementById('player').dataset.state === 'ended'")
    assert driver.execute_script("return document.querySelector('audio').ended") is True
    assert _text(driver, "error") == ""


def _download(driver: WebDriver) -> tuple[str, str, str]:
    """The download link's (file name, href, SHA-256 of the bytes it holds)."""
    link = driver.find_element(By.ID, "download")
    assert link.is_displayed()
    digest = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const hex = (d) => [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, '0'));
        blobs[document.getElementById('download').href].arrayBuffer()
          .then((b) => crypto.subtle.digest('SHA-256', b))
          .then((d) => done(hex(d).join('')), (e) => done(String(e)));
        """
    )
    return str(link.get_attribute("download")), str(link.get_attribute("href")), str(digest)


def _api_digest(served: Served, body: dict[str, Any], key: str | None = None) -> str:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(timeout=WAIT) as http:
        response = http.post(f"{served.url}/v1/audio/speech", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return hashlib.sha256(response.content).hexdigest()


# -- the page's files ---------------------------------------------------------------------
def test_the_page_is_served_whole_under_its_policy(served: Served) -> None:
    with httpx.Client(timeout=WAIT) as http:
        for path in PAGE_FILES:
            answer = http.get(f"{served.url}{path}")
            assert answer.status_code == 200, path
            for name, value in PAGE_HEADERS.items():
                assert answer.headers[name] == value, (path, name)
        html = http.get(f"{served.url}/").text
    # Nothing the policy would block: no inline script or style, no handler attributes, and
    # nothing fetched from elsewhere.
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"<style|\sstyle=|\son\w+=", html, re.IGNORECASE)
    assert not re.search(r"(src|href)=\"(https?:)?//", html)


# -- voices ---------------------------------------------------------------------------------
def test_the_voice_lists_fill_from_the_server(
    browser: WebDriver, served: Served, engine: Engine, private_home: Path
) -> None:
    SpeakerLibrary().add("Narrator", engine.sample_speaker(5), 5, "calm")
    with httpx.Client(timeout=WAIT) as http:
        listed = [v["name"] for v in http.get(f"{served.url}/v1/audio/voices").json()["voices"]]
    assert listed[0] == "Narrator" and "alloy" in listed
    browser.get(f"{served.url}/")
    _until(browser, "return document.body.dataset.voices === 'loaded'")
    for select in ("voice", "voice2"):
        options = Select(browser.find_element(By.ID, select)).options
        assert [o.get_attribute("value") for o in options] == listed
        assert options[0].get_attribute("textContent") == "Narrator (calm)"
    # A blend picks two different voices to start with.
    picked = "return [voice.value, voice2.value]"  # elements with an id are globals
    first, second = browser.execute_script(picked)
    assert first == "Narrator" and second != first
    # Every field has a label (a screen reader names it).
    unlabelled = "return [...document.querySelectorAll('input, select, textarea')]" + (
        ".filter((e) => e.labels.length === 0).map((e) => e.id)"
    )
    assert browser.execute_script(unlabelled) == []
    # The live figures: the model from /health (its name, never a path), then the decoder's.
    _until(browser, "return document.getElementById('model-name').textContent === 'demo on cpu'")
    # The demo model's random weights are labelled where the audio is heard.
    _until(
        browser,
        "return document.getElementById('model-warning').textContent"
        " === 'Random weights: noise, not speech.'",
    )
    _until(browser, "return /^[0-9]+$/.test(document.getElementById('fig-steps').textContent)")


# -- speech -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["wav", "pcm"])
def test_typed_text_plays_to_the_end_and_downloads(
    page: WebDriver, served: Served, browser_audio: Path, fmt: str
) -> None:
    _record_requests(page)
    _speak(page, TEXT, fmt)
    _played_to_the_end(page)
    assert _text(page, "status") == "Played to the end."
    # The whole of it (a streamed WAV's header says "size unknown"; pcm was wrapped as WAV).
    duration = float(page.execute_script("return document.querySelector('audio').duration"))
    assert 0.5 < duration < 0.7, duration  # 30 steps of 512 samples at 24 kHz: 0.64 s
    # Really played: the sound reached the browser's (virtual) output device.
    played = [np.fromfile(f, dtype=np.float32) for f in browser_audio.glob("out_*.raw")]
    assert played and max(float(np.abs(p).max(initial=0)) for p in played) > 0.01
    sent = _sent(page)
    assert sent == [{"model": "chattts", "input": TEXT, "voice": "alloy", "response_format": fmt}]
    name, href, digest = _download(page)
    assert name == f"speech.{fmt}" and href.startswith("blob:")
    # The file holds the API's own bytes (pcm too, though the player got it as WAV).
    assert digest == _api_digest(served, sent[0])
    steps = int(_until(page, "return Number(document.getElementById('fig-steps').textContent)"))
    assert steps > 0


def test_sampling_fields_are_sent_only_when_changed(page: WebDriver) -> None:
    _record_requests(page)
    page.find_element(By.TAG_NAME, "summary").click()  # opens "Sampling"
    for field, value in (("temperature", "0.5"), ("seed", "42")):
        page.find_element(By.ID, field).clear()
        page.find_element(By.ID, field).send_keys(value)
    oral = page.find_element(By.ID, "oral")
    assert not oral.is_enabled()  # a refine level means nothing without refine
    page.find_element(By.ID, "refine_text").click()
    oral.clear()
    oral.send_keys("5")
    _speak(page, TEXT)
    _played_to_the_end(page)
    body = _sent(page)[0]
    assert set(body) == PLAIN_FIELDS | {"temperature", "seed", "refine_text", "oral"}
    assert body["temperature"] == 0.5 and body["seed"] == 42
    assert body["refine_text"] is True and body["oral"] == 5
    # Refine off again: its level is not sent, though it still shows 5.
    page.find_element(By.ID, "refine_text").click()
    _speak(page, TEXT)
    _played_to_the_end(page)
    assert set(_sent(page)[1]) == PLAIN_FIELDS | {"temperature", "seed"}


def test_a_blend_sends_both_voices_with_their_weights(page: WebDriver) -> None:
    _record_requests(page)
    page.find_element(By.ID, "blend").click()
    Select(page.find_element(By.ID, "voice2")).select_by_value("nova")
    weight = page.find_element(By.ID, "weight")
    weight.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)  # 0.7 -> 0.6, as a keyboard user moves it
    assert _text(page, "weight-shown") == "60% / 40%"
    _speak(page, TEXT)
    _played_to_the_end(page)
    assert _sent(page)[0]["voice"] == "alloy*0.6+nova*0.4"


def test_api_errors_show_their_sentence(page: WebDriver) -> None:
    error = page.find_element(By.ID, "error")
    assert error.get_attribute("role") == "alert" and not error.is_displayed()
    for text, sentence in (
        ("", "The input must be a non-empty string."),
        (
            "好" * (MAX_INPUT + 1),
            f"The input has {MAX_INPUT + 1} characters; the limit is {MAX_INPUT}.",
        ),
    ):
        _speak(page, text)
        _until(
            page, f"return document.getElementById('error').textContent === {json.dumps(sentence)}"
        )
        assert error.is_displayed()
        assert page.find_element(By.ID, "synthesize").is_enabled()
    page.find_element(By.ID, "speed").clear()
    page.find_element(By.ID, "speed").send_keys("9")
    _speak(page, TEXT)
    _until(page, "return document.getElementById('error').textContent.includes('speed')")
    # The next good request clears the sentence.
    page.find_element(By.ID, "speed").clear()
    page.find_element(By.ID, "speed").send_keys("1")
    _speak(page, TEXT)
    _played_to_the_end(page)
    assert not error.is_displayed()


def test_a_request_can_be_cancelled_while_waiting(
    page: WebDriver, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request is held inside the server (reading its voice) until the page cancels it."""
    asked, release = threading.Event(), threading.Event()
    real_voice = served.server.voice

    def held_voice(name: str) -> Any:
        asked.set()
        release.wait(WAIT)
        return real_voice(name)

    monkeypatch.setattr(served.server, "voice", held_voice)
    try:
        _speak(page, TEXT)
        assert asked.wait(WAIT)
        assert page.find_element(By.ID, "cancel").is_enabled()
        assert not page.find_element(By.ID, "synthesize").is_enabled()
        page.find_element(By.ID, "cancel").click()
        _until(page, "return document.getElementById('status').textContent === 'Cancelled.'")
    finally:
        release.set()
    assert page.find_element(By.ID, "synthesize").is_enabled()
    assert not page.find_element(By.ID, "cancel").is_enabled()
    assert (
        _text(page, "error") == "" and page.find_element(By.ID, "download").is_displayed() is False
    )


# -- the key ----------------------------------------------------------------------------------
def test_a_server_with_a_key_asks_for_it_and_the_tab_keeps_it(
    page: WebDriver, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "page-test-key"
    monkeypatch.setattr(served.server, "api_key", key)
    page.get(f"{served.url}/")  # the page's own files need no key
    _until(page, "return document.body.dataset.voices === 'loaded'")
    needs = "This server needs its API key: type it in the API key field."
    assert _text(page, "error") == needs  # the voice list asked first
    _speak(page, TEXT)
    _until(page, f"return document.getElementById('error').textContent === {json.dumps(needs)}")
    _until(page, "return document.getElementById('figures-note').textContent.includes('key')")
    page.find_element(By.ID, "key").send_keys("wrong")
    _speak(page, TEXT)
    _until(
        page, "return document.getElementById('error').textContent.includes('refused this API key')"
    )
    page.find_element(By.ID, "key").clear()
    page.find_element(By.ID, "key").send_keys(key)
    _speak(page, TEXT)
    _played_to_the_end(page)
    # Kept for this tab only: there after a reload, never in localStorage.
    page.refresh()
    _until(page, "return document.body.dataset.voices === 'loaded'")
    assert page.find_element(By.ID, "key").get_attribute("value") == key
    assert page.execute_script("return localStorage.length") == 0
    assert _text(page, "error") == ""


# -- polling ----------------------------------------------------------------------------------
def test_the_figures_are_not_polled_while_the_tab_is_hidden(
    page: WebDriver, served: Served
) -> None:
    def health_answers() -> int:
        return served.server.metrics.answers.get(("/health", 200), 0)

    def polled_again() -> None:
        before, waited = health_answers(), 0.0
        while health_answers() == before and waited < 10:
            time.sleep(0.1)
            waited += 0.1
        assert health_answers() > before, "the page did not poll /health"

    polled_again()
    shown = page.current_window_handle
    page.switch_to.new_window("tab")  # the page's tab is now in the background: hidden
    try:
        time.sleep(0.5)  # a poll already on its way may still land
        before = health_answers()
        time.sleep(3)  # more than one poll's interval
        assert health_answers() == before
    finally:
        page.close()
        page.switch_to.window(shown)
    polled_again()  # shown again: polled at once
