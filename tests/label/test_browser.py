"""The page in a real browser (Playwright driving Debian's chromium): label 30 digits by keyboard, undo one.

Set ``PBASSESS_UPDATE_SCREENSHOT=1`` to write the README's screenshot, docs/images/label_app.png.
"""

from __future__ import annotations

import os
from pathlib import Path

from pbassess import load_data
from pbassess.active.session import LabelingSession

from .conftest import CHROMIUM_ARGS

POOL = load_data("digits-logreg")
TRUTH = {str(i): POOL.classes[k] for i, k in zip(POOL.item_ids, POOL.labels, strict=True)}
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "label_app.png"


def _wait_idle(page, previous_item: str | None = None) -> str:
    page.wait_for_function("prev => document.body.dataset.busy !== '1' && document.body.dataset.item "
                           "&& document.body.dataset.item !== prev", arg=previous_item or "", timeout=20_000)
    return page.evaluate("document.body.dataset.item")


def test_label_thirty_digits_by_keyboard_and_undo_one(served, chromium_path, tmp_path):
    from playwright.sync_api import sync_playwright

    server = served(seed=7)
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=chromium_path,
                                                       headless=True, args=CHROMIUM_ARGS, bypass_csp=True,  # Playwright evaluates strings
                                                       viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            page.goto(server.url + "?annotator=tester")
            item = _wait_idle(page)
            assert page.locator("#item-image").is_visible()
            assert page.evaluate("document.getElementById('item-image').naturalWidth") > 0  # the 8x8 digit, enlarged
            assert "model:" in page.inner_text("#prediction")
            given = []
            for _ in range(30):
                page.keyboard.press(TRUTH[item])  # the digits' keys are the digits themselves
                given.append(item)
                item = _wait_idle(page, item)
            page.keyboard.press("u")  # undo the last label: its item comes back
            item = _wait_idle(page, item)
            assert item == given[-1]
            page.wait_for_function("document.body.dataset.labeled === '29'", timeout=20_000)
            page.wait_for_function("document.getElementById('figure').complete && "
                                   "document.getElementById('figure').naturalWidth > 0", timeout=30_000)
            panel = page.inner_text("#panel")
            assert "After 29 labels" in panel and "29 of 899 items labeled (tester 29)" in panel
            page.keyboard.press("h")  # hide the prediction (against anchoring)
            assert not page.locator("#prediction").is_visible()
            page.keyboard.press("h")
            shot = SCREENSHOT if os.environ.get("PBASSESS_UPDATE_SCREENSHOT") else tmp_path / "label_app.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)
            rows = page.locator("#classes tbody tr")
            assert rows.count() == 10
            shown_labeled = sum(int(rows.nth(k).locator("td").nth(2).inner_text()) for k in range(10))
            shown_p = [float(rows.nth(k).locator("td").nth(6).inner_text()) for k in range(10)]
        finally:
            context.close()
    # the store: 29 labels standing, the undone one kept as history, each with who and when
    events = server.service.store.events(include_undone=True)
    assert len(events) == 30 and [e["undone"] for e in events] == [0] * 29 + [1]
    assert all(e["annotator"] == "tester" and e["time"].endswith("+00:00") for e in events)
    assert server.service.store.effective_labels() == {i: TRUTH[i] for i in given[:-1]}
    # the panel shows the library's own posterior of those 29 labels
    server.service.session.flush()
    reference = LabelingSession.load(server.service.session.state_path).status(4000)
    assert shown_labeled == reference["labeled"] == 29
    assert shown_p == [round(c["p_answer"], 2) for c in reference["classes"]]
