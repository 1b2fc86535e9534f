"""The web table in a real browser: Playwright driving the system's Chromium (``apt-get install chromium``).

The viewer steps a replay to its end and shows the file's final totals; a person's game against three
``rule`` seats is played by clicking only what the page offers, and the saved replay re-plays; both pages
are photographed at desktop and phone widths into the test's output folder. With the environment variable
``WIZARD_DOCS_SCREENSHOT=PATH`` the desktop picture of the play page is also written to PATH (the
README's picture: ``WIZARD_DOCS_SCREENSHOT=docs/web-table.png pytest tests/test_web_browser.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from playwright import sync_api  # the dev extra: a missing install fails here rather than skipping

from tests.web_server import running_server
from wizard_env.cli.main import main
from wizard_env.engine.replay import read_replays

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    # make test installs Chromium when run as root, and CI (.ci/run) sets WIZARD_REQUIRE_BROWSER, so these tests cannot
    # silently drop out there.
    if os.environ.get("WIZARD_REQUIRE_BROWSER"):
        raise RuntimeError("WIZARD_REQUIRE_BROWSER is set but there is no Chromium at /usr/bin/chromium")
    pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium; make test installs it when run as root)",
                allow_module_level=True)

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: Milliseconds each agent move stays on the play page (the page's default is 700).
DELAY = 10
#: How long the page may take to answer a click (bounds a hang; no speed is checked).
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("replays")


@pytest.fixture(scope="module")
def base(folder):
    with running_server(folder) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser, base):
    """A desktop-sized page that fails the test on a script or console error, or a request to another site."""
    context = browser.new_context(viewport=DESKTOP)
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda err: problems.append(f"script error: {err}"))
    # a console error is a bug (a blocked style or script among them), except the log line of a refused request
    tab.on("console", lambda msg: problems.append(f"console: {msg.text}")
           if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
    tab.on("request", lambda req: None if req.url.startswith((base, "data:")) else problems.append(f"fetched {req.url}"))
    tab.set_default_timeout(WAIT_MS)
    yield tab
    context.close()
    assert problems == []


def fits_the_width(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def photograph(page, path: Path) -> None:
    """Screenshots of the page at desktop and phone widths; at phone width nothing may stick out sideways."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=str(path.with_name(path.stem + "-desktop.png")), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(path.with_name(path.stem + "-phone.png")), full_page=True)
    assert fits_the_width(page), f"{path.stem}: the page is wider than a phone's screen"
    page.set_viewport_size(DESKTOP)


def shown_totals(page, players: int) -> list[int]:
    return [int(page.locator(f"[data-testid=total-{s}]").inner_text()) for s in range(players)]


def test_the_viewer_steps_a_replay_to_the_end_and_shows_the_final_totals(page, base, folder, tmp_path):
    path = folder / "sim.jsonl"
    assert main(["simulate", "--players", "5", "--rounds", "4", "--agents", "rule,random,rule,random,rule", "--games", "2", "--seed", "3",
                 "--replay", str(path)]) == 0
    record = read_replays(path)[1]
    steps = sum(2 + len(r["tricks"]) for r in record["rounds"])
    page.goto(f"{base}/viewer?file=sim.jsonl&game=2")
    page.wait_for_selector("body[data-state=loaded]")
    assert page.locator("[data-testid=position]").inner_text() == f"step 1 of {steps}"
    assert shown_totals(page, 5) == [0] * 5
    for step in range(2, steps + 1):
        page.keyboard.press("ArrowRight")
        assert page.locator("[data-testid=position]").inner_text() == f"step {step} of {steps}"
        if step == 2 + len(record["rounds"][0]["tricks"]):  # the last trick of round 1: its totals are shown
            assert shown_totals(page, 5) == record["rounds"][0]["totals"]
    assert shown_totals(page, 5) == record["final_totals"]
    assert "Game over" in page.locator("[data-testid=final]").inner_text()
    assert page.locator("table.scores tbody tr").count() == len(record["rounds"])
    photograph(page, tmp_path / "screens" / "viewer")
    page.keyboard.press("Shift+ArrowLeft")  # back to the start of the last round
    assert page.locator("[data-testid=final]").is_hidden()
    assert shown_totals(page, 5) == record["rounds"][-2]["totals"]
    page.keyboard.press("Home")
    assert page.locator("[data-testid=position]").inner_text() == f"step 1 of {steps}"
    assert page.locator(".seat .hand .card[data-card=back]").count() == 0  # every hand shown
    page.keyboard.press("v")  # seat 0's view: the other four hands face down
    assert page.locator(".seat[data-seat='0'] .hand .card[data-card=back]").count() == 0
    assert page.locator(".seat .hand .card[data-card=back]").count() == 4 * len(record["rounds"][0]["hands"][0])


def test_the_viewer_opens_an_upload_and_shows_why_a_file_is_refused(page, base, folder, tmp_path):
    good = tmp_path / "mine.jsonl"
    assert main(["simulate", "--players", "3", "--rounds", "2", "--games", "1", "--seed", "9", "--replay", str(good)]) == 0
    page.goto(f"{base}/viewer")
    page.wait_for_selector("body[data-state=empty]")
    page.set_input_files("[data-testid=upload]", str(good))
    page.wait_for_selector("body[data-state=loaded]")
    page.keyboard.press("End")
    assert shown_totals(page, 3) == read_replays(good)[0]["final_totals"]
    bad = tmp_path / "notes.jsonl"
    bad.write_text(json.dumps({"format": "chess-pgn/2"}) + "\n")
    page.set_input_files("[data-testid=upload]", str(bad))
    page.wait_for_selector("body[data-state=error]")
    assert "is not 'wizard-replay/1'" in page.locator("[data-testid=error]").inner_text()
    page.goto(f"{base}/viewer?file=..%2Fsecret.jsonl")
    page.wait_for_selector("body[data-state=error]")
    assert "not a file name in the replay folder" in page.locator("[data-testid=error]").inner_text()


def test_a_whole_game_against_three_rule_seats_by_clicking_only_what_is_offered(page, base, folder, tmp_path, capsys):
    rng = np.random.default_rng(7)
    page.goto(f"{base}/?delay={DELAY}")
    page.wait_for_selector("body[data-state=setup]")
    page.select_option("#players", "4")
    page.fill("#rounds", "standard")
    page.fill("#seed", "2024")
    assert [s.input_value() for s in page.locator("#opponents select").all()] == ["rule"] * 3
    page.click("[data-testid=start]")
    turns, tried_illegal = 0, False
    while True:
        page.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
        if page.get_attribute("body", "data-state") == "over":
            break
        offered = page.locator("button.legal:enabled")
        assert offered.count() >= 1
        assert page.locator("button.illegal:enabled").count() == 0  # what is not legal cannot be clicked
        move = page.get_attribute("body", "data-move")
        if not tried_illegal and page.locator("button.card.illegal").count():
            page.locator("button.card.illegal").first.click(force=True)  # a click on it changes nothing
            assert page.get_attribute("body", "data-move") == move and page.get_attribute("body", "data-state") == "your-turn"
            tried_illegal = True
        if turns == 20:
            photograph(page, tmp_path / "screens" / "play")
            if os.environ.get("WIZARD_DOCS_SCREENSHOT"):
                shutil.copyfile(tmp_path / "screens" / "play-desktop.png", os.environ["WIZARD_DOCS_SCREENSHOT"])
        offered.nth(int(rng.integers(offered.count()))).click()
        turns += 1
    assert tried_illegal
    over = page.locator("[data-testid=over]").inner_text()
    assert "Game over" in over
    photograph(page, tmp_path / "screens" / "play-over")
    page.click("[data-testid=open-replay]")
    page.wait_for_selector("body[data-state=loaded]")
    name = page.locator("#files").input_value()
    (record,) = read_replays(folder / name)
    assert record["seed"] == 2024 and record["seats"] == ["human", "rule", "rule", "rule"]
    trump_choices = sum(r["trump_card"] == "Wiz" and r["dealer"] == 0 for r in record["rounds"])
    assert turns == 15 + sum(range(1, 16)) + trump_choices  # 15 bids, every card of rounds of 1 to 15 cards, trump named
    page.keyboard.press("End")
    assert shown_totals(page, 4) == record["final_totals"]
    assert all(f"{total}" in over for total in record["final_totals"])
    capsys.readouterr()
    assert main(["replay", str(folder / name), "--check"]) == 0
    assert "all 1 games re-play identically on this engine" in capsys.readouterr().out
    shots = sorted(p.name for p in (tmp_path / "screens").iterdir())
    assert shots == ["play-desktop.png", "play-over-desktop.png", "play-over-phone.png", "play-phone.png"]


def test_a_move_from_a_stale_tab_is_refused_on_the_page_and_changes_nothing(page, browser, base):
    page.goto(f"{base}/?delay={DELAY}")
    page.wait_for_selector("body[data-state=setup]")
    page.fill("#rounds", "3")
    page.click("[data-testid=start]")
    page.wait_for_selector("body[data-state=your-turn]")
    move = page.get_attribute("body", "data-move")
    other = browser.new_context(viewport=PHONE).new_page()  # the same game in a second tab
    other.goto(page.url)
    other.wait_for_selector("body[data-state=your-turn]")
    assert other.get_attribute("body", "data-move") == move
    page.locator("button.legal:enabled").first.click()
    page.wait_for_selector(f"body:not([data-move='{move}'])[data-state=your-turn], body[data-state=over]")
    moved = page.get_attribute("body", "data-move")
    other.locator("button.legal:enabled").first.click()  # the second tab still shows the old position
    error = other.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "out of turn" in error.inner_text()
    other.reload()
    other.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
    assert other.get_attribute("body", "data-move") == moved  # the refused click changed nothing
    other.context.close()


def test_impossible_settings_are_shown_on_the_page(page, base):
    page.goto(f"{base}/")
    page.wait_for_selector("body[data-state=setup]")
    page.fill("#rounds", "99")
    page.click("[data-testid=start]")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible")
    assert "round" in error.inner_text()
    assert page.locator("#setup").is_visible()
