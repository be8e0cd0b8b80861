"""The web page (`rat ui`, /ui on `langgraph dev`) in a real browser: Debian's Chromium,
driven by Playwright, against the server with a scripted model, so it is quick.

Ask a question and see the draft, a revised step with its change marked, its sources and
the answer with citations; reload and open the run from the history; pause at the draft
review, edit a step, continue and see the edited step checked. Nothing is fetched from
outside the machine: every request the page makes goes to the server it came from.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_fakes import (
    FLAGS,
    MODEL,
    RETRIEVER,
    DevServer,
    dev_server,
    draft_for,
    free_port,
    server_env,
)
from services import CHROMIUM

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'rat-agent[dev]'")
pytest.importorskip("langgraph_api", reason="needs the server: pip install 'langgraph-cli[inmem]'")
pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

# The server's defaults, which the page offers: the scripted model and a list retriever.
SETTINGS = {"RAT_MODEL": MODEL, "RAT_RETRIEVER": RETRIEVER, "RAT_DRAFT": "cot", "RAT_K": "2"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with dev_server(tmp_path_factory.mktemp("ui"), settings=SETTINGS) as running:
        yield running


@pytest.fixture
def page(server: DevServer) -> Iterator[sync_api.Page]:
    outside: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on(
            "request",
            lambda r: outside.append(r.url) if not r.url.startswith(server.url) else None,
        )
        page.goto(f"{server.url}/ui/")
        yield page
        browser.close()
    assert outside == [], "the page fetched from outside the machine"


def ask(page: sync_api.Page, question: str) -> None:
    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Ask").click()


@pytest.mark.needs("chromium")
def test_a_question_shows_its_draft_revisions_sources_and_cited_answer(
    page: sync_api.Page,
) -> None:
    expect = sync_api.expect
    question = "How do I build a beacon?"
    drafts = draft_for(question)
    ask(page, question)

    expect(page.locator(".answer")).to_contain_text(f"answer to {question}", timeout=60_000)
    expect(page.locator(".draft li")).to_have_text(drafts)
    step = page.locator('.step[data-step="1"]')
    expect(step.locator(".status")).to_have_text("revised")
    # the revision beside its draft, the words it added marked
    expect(step.locator("ins")).to_contain_text("FIXED")
    expect(step.locator(".diff")).to_contain_text(drafts[0])
    expect(step.locator(".query")).to_contain_text(f"about: {drafts[0]}")
    # a source opens to the passage the step was shown
    source = step.locator(".sources details").first
    source.locator("summary").click()
    expect(source.locator("blockquote")).not_to_be_empty()
    # the answer's citations open their sources
    answer = page.locator(".answer")
    answer.locator(".cite").first.click()
    expect(answer.locator(".cited details").first).to_have_attribute("open", "")
    expect(page.locator(".stats")).to_contain_text("model calls")
    expect(page.locator(".stats")).to_contain_text(f"{MODEL} · ")  # the run's model, its time
    expect(page.locator(".stats")).to_contain_text(re.compile(r"\d+\.\d s"))

    # past runs come from the server's threads: after a reload, the run opens again
    page.reload()
    page.locator(".past li button", has_text=question).first.click()
    expect(page.locator(".question")).to_have_text(question)
    expect(page.locator('.step[data-step="2"] .status')).to_have_text("revised")
    expect(page.locator(".answer")).to_contain_text(f"answer to {question}")


@pytest.mark.needs("chromium")
def test_the_draft_is_edited_in_the_page_and_the_edit_is_checked(page: sync_api.Page) -> None:
    expect = sync_api.expect
    question = "How do I tame a wolf?"
    page.get_by_label("Review the draft").check()
    ask(page, question)

    first = page.get_by_label("Draft step 1")
    expect(first).to_have_value(draft_for(question)[0], timeout=60_000)
    first.fill("Find a wolf in a forest")
    page.get_by_role("button", name="Check these steps").click()

    # the run's end first: while a step is checked, its draft and the revision being
    # written are both on the page
    expect(page.locator(".answer")).to_contain_text(f"answer to {question}", timeout=60_000)
    step = page.locator('.step[data-step="1"]')
    expect(step.locator(".text")).to_contain_text("FIXED Find a wolf in a forest")


def test_rat_ui_starts_the_server_with_the_page(tmp_path: Path) -> None:
    """The README's command: `rat ui` serves the page and the API on the port it is given,
    offering the settings of its environment."""
    port = free_port()
    env = {**server_env(tmp_path), **SETTINGS}
    command = [sys.executable, "-m", "rat_agent.cli", "ui", "--port", str(port)]
    log = (tmp_path / "ui.log").open("wb")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "ui.log").read_text()
            try:
                if httpx.get(f"{url}/ok", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        page = httpx.get(f"{url}/ui/", trust_env=False)
        assert page.status_code == 200 and '<div id="root">' in page.text
        offered = httpx.get(f"{url}/ui/options", trust_env=False).json()
        assert offered["model"] == MODEL and offered["retriever"] == RETRIEVER
        graphs = httpx.post(f"{url}/assistants/search", json={}, trust_env=False).json()
        assert {a["graph_id"] for a in graphs} == {"rat", "ingest"}
        # its threads live in the data folder, so past runs outlive the server
        assert (Path(env["RAT_DATA_DIR"]) / "ui" / "langgraph.json").exists()
        assert "rat ui: http://127.0.0.1:" in (tmp_path / "ui.log").read_text()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
