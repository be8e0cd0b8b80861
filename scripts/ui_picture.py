"""The README's picture of the page, from a real run: `rat ui` with the shipped defaults
(the bundled model and corpus, offline), the demo's question asked in Chromium, and the
finished run's page saved as a PNG. A run takes the model's minutes; nothing is faked.

    .venv/bin/python scripts/ui_picture.py [--out docs/images/ui.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import expect, sync_playwright

QUESTION = "How do I obtain a diamond pickaxe in Minecraft?"  # the demo's (benchmarks/demo.py)
RUN_SECONDS = 900  # the bundled model on 2 cores takes 5-10 minutes for this plan


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs/images/ui.png")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("no Chromium: sudo bash scripts/chromium.sh")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        # a data folder of its own: the page's history shows this run alone
        env = {**os.environ, "RAT_DATA_DIR": data}
        command = [sys.executable, "-m", "rat_agent.cli", "ui", "--port", str(port)]
        server = subprocess.Popen(command, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/ok", timeout=2, trust_env=False).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{url}/ui/")
                page.get_by_label("Question").fill(args.question)
                page.get_by_role("button", name="Ask").click()
                expect(page.locator(".stats")).to_contain_text(
                    "model calls", timeout=RUN_SECONDS * 1000
                )
                page.locator('.step[data-step="1"] .sources details summary').first.click()
                # the question, the draft and the first steps with a source open
                page.screenshot(path=args.out, clip={"x": 0, "y": 0, "width": 1280, "height": 1500})
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    print(f"wrote {Path(args.out)}")


if __name__ == "__main__":
    main()
