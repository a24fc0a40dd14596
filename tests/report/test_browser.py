"""The report in a real headless browser (Debian's chromium driven by Playwright; no browser
download). Skipped when chromium or playwright is missing; CI installs both."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import XSS_ANSWER, XSS_QUESTION, ReportCase

CHROMIUM = os.environ.get("HOPSCORE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless chromium (fresh profile) for the module, driven by Playwright."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="hopscore-chromium-")
    with playwright_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1366, "height": 900},
        )
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


def open_report(context: Any, html: Path) -> tuple[Any, list[str], list[str]]:
    """Open a report from its file URL, recording console errors, dialogs and any network."""
    page = context.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:"))
            else errors.append(f"network request: {r.url}"))
    page.goto(html.resolve().as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    return page, errors, dialogs


@pytest.fixture(scope="module")
def browser_page(chromium: Any, report_case: ReportCase) -> tuple[Any, list[str], list[str]]:
    return open_report(chromium, report_case.html)


def scores(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "scores.jsonl").read_text().splitlines()]


def expect_count(page: Any, n: int) -> None:
    """Wait for the (debounced) search to settle on ``n`` matches."""
    from playwright.sync_api import expect

    expect(page.locator("#match-count")).to_have_text(re.compile(rf"^{n} of "))


def count_text(page: Any) -> int:
    return int(page.inner_text("#match-count").split(" of ")[0])


def test_loads_offline_without_errors_and_screenshot(browser_page, report_case, tmp_path_factory):
    page, errors, dialogs = browser_page
    shot = tmp_path_factory.mktemp("screenshot") / "report-first-screen.png"
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    print(f"\nreport screenshot: {shot}")
    assert errors == [] and dialogs == []


def test_summary_numbers_in_the_dom_equal_metrics_json(browser_page, report_case):
    page, errors, _ = browser_page
    cells = page.eval_on_selector_all(
        "#summary td.metric-cell",
        "cells => cells.map(c => [c.dataset.run, c.dataset.metric, c.dataset.value,"
        " c.querySelector('.value').textContent])",
    )
    assert len(cells) == 2 * 12
    for run, directory in (("base", report_case.base), ("new", report_case.new)):
        metrics = json.loads((directory / "metrics.json").read_text())["metrics"]
        shown = {m: (float(v), t) for r, m, v, t in cells if r == run}
        assert set(shown) == set(metrics)
        for name, value in metrics.items():
            assert shown[name][0] == value
            assert shown[name][1] == f"{100 * value:.2f}"
    assert errors == []


def test_filters_search_and_paging(browser_page, report_case):
    page, errors, _ = browser_page
    base_rows = scores(report_case.base)
    assert count_text(page) == 120
    assert page.inner_text("#page-info") == "page 1 of 3"
    page.click("#page-next")
    assert page.inner_text("#page-info") == "page 2 of 3"
    page.select_option("#filter-correct", "wrong")
    assert count_text(page) == sum(r["metrics"]["em"] == 0 for r in base_rows)
    page.select_option("#filter-group", "type=comparison")
    assert count_text(page) == sum(
        r["metrics"]["em"] == 0 and r["groups"]["type"] == "comparison" for r in base_rows)
    page.click("#filter-reset")
    assert count_text(page) == 120
    page.fill("#filter-search", "q017")
    expect_count(page, 1)
    assert page.inner_text("#sample-rows tr td.id") == "q017"
    page.click("#filter-reset")
    # flips of the second run against the baseline
    page.select_option("#filter-run", "1")
    page.select_option("#filter-correct", "wr")
    new_rows = {r["id"]: r for r in scores(report_case.new)}
    expected = sum(r["metrics"]["em"] == 0 and new_rows[r["id"]]["metrics"]["em"] == 1
                   for r in base_rows)
    assert expected > 0 and count_text(page) == expected
    page.click("#filter-reset")
    page.select_option("#filter-run", "0")
    # the same flips from the baseline's side: baseline wrong, the other run right
    page.select_option("#filter-correct", "wr")
    assert count_text(page) == expected
    page.select_option("#filter-correct", "rw")
    right_to_wrong = sum(r["metrics"]["em"] == 1 and new_rows[r["id"]]["metrics"]["em"] == 0
                         for r in base_rows)
    assert count_text(page) == right_to_wrong
    if right_to_wrong:
        page.click("#sample-rows tr")
        assert "flips against this baseline" in page.inner_text("#detail")
    page.click("#filter-reset")
    assert errors == []


def test_significance_is_a_symbol_and_text_not_colour_alone(browser_page):
    page, errors, _ = browser_page
    rows = page.locator("table.compare-table tbody tr")
    assert rows.count() > 0
    for i in range(rows.count()):
        verdict = rows.nth(i).locator("td.verdict").inner_text().strip()
        assert verdict, rows.nth(i).inner_text()
        classes = rows.nth(i).get_attribute("class") or ""
        if "better" in classes or "worse" in classes:  # coloured rows also say it in words
            assert "significant" in verdict and rows.nth(i).locator(".sig").count() == 1
    assert errors == []


def test_category_link_filters_the_browser(browser_page):
    page, errors, _ = browser_page
    selector = "a.filter-category[data-run='0'][data-category='wrong answer, right facts']"
    link = page.locator(selector)
    expected = int(link.locator("xpath=../../td[1]").inner_text())
    link.click()
    assert count_text(page) == expected
    page.click("#filter-reset")
    assert errors == []


def test_drill_down_shows_everything_and_hostile_text_stays_text(browser_page):
    page, errors, dialogs = browser_page
    page.fill("#filter-search", "q003")
    expect_count(page, 1)
    page.click("#sample-rows tr")
    detail = page.locator("#detail")
    assert detail.is_visible()
    text = detail.inner_text()
    assert "q003" in text and XSS_QUESTION in text and XSS_ANSWER in text
    assert "right answer" in text or "wrong answer" in text  # error category of the sample
    assert "extracted (strict)" in text and "raw output" in text
    detail.locator("summary", has_text="context").click()
    assert "<script>alert(3)</script>" in detail.inner_text()
    # nothing from the sample became an element
    assert page.locator("#detail script, #detail img, #sample-rows img").count() == 0
    assert dialogs == [] and errors == []
    # links from the comparison section open a sample
    page.click("#filter-reset")
    page.locator("details", has_text="Flipped examples").first.locator("summary").click()
    first_flip = page.locator("a.open-sample").first
    flip_id = first_flip.inner_text()
    first_flip.click()
    assert flip_id in page.inner_text("#detail .detail-id")
    assert errors == []


def test_compressed_report_loads_and_filters(chromium, report_case, tmp_path):
    """The gzip + base64 path (used for big reports) in the same real browser."""
    from tests.conftest import run_cli

    html = tmp_path / "packed.html"
    result = run_cli("report", report_case.base, report_case.new, "--gold", report_case.gold,
                     "-o", html, "--resamples", "100", "--compress", "always")
    assert result.returncode == 0, result.stderr
    page, errors, _ = open_report(chromium, html)
    assert count_text(page) == 120
    page.select_option("#filter-correct", "wrong")
    assert count_text(page) == sum(r["metrics"]["em"] == 0 for r in scores(report_case.base))
    page.close()
    assert errors == []
