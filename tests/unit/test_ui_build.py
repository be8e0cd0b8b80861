"""The page shipped in the package is the build of the sources in ui/: its bundle names what
it loads, and the sources' hash (ui/vite.config.ts writes it at build time) is theirs now."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rat_agent.providers.chat import API_KEY_ENV
from rat_agent.ui.app import DIST, app, options

UI = Path(__file__).resolve().parents[2] / "ui"
SOURCES = ["index.html", "package-lock.json", "tsconfig.json", "vite.config.ts", "src"]


def source_hash() -> str:
    digest = hashlib.sha256()
    files = [p for s in SOURCES for p in ([UI / s] if (UI / s).is_file() else (UI / s).rglob("*"))]
    for path in sorted(
        (p for p in files if p.is_file()), key=lambda p: p.relative_to(UI).as_posix()
    ):
        digest.update(path.relative_to(UI).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_the_shipped_page_is_the_build_of_its_sources() -> None:
    built = (DIST / "source.sha256").read_text().strip()
    assert built == source_hash(), "ui/ changed since the page was built: run `make ui-build`"


def test_the_page_and_what_it_loads_are_served_from_the_package() -> None:
    client = TestClient(app)
    page = client.get("/ui/")
    assert page.status_code == 200 and '<div id="root">' in page.text
    assets = re.findall(r'(?:src|href)="(/ui/assets/[^"]+)"', page.text)
    assert {a.rsplit(".", 1)[1] for a in assets} == {"js", "css"}
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    # nothing from outside the machine: no absolute URL in the page or its bundle
    bundle = "".join(client.get(a).text for a in assets if a.endswith(".css")) + page.text
    assert not re.search(r"(?:src|href)=\"https?://|@import\s+url\(\s*['\"]?https?://", bundle)
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/"


def test_the_page_offers_what_the_server_is_set_up_with(monkeypatch: pytest.MonkeyPatch) -> None:
    for names in API_KEY_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAT_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAT_RETRIEVER", "tavily")
    offered = TestClient(app).get("/ui/options").json()
    assert offered["model"] == "openai:gpt-4o-mini" and offered["retriever"] == "tavily"
    assert offered["models"][:3] == ["openai:gpt-4o-mini", "local", "local-tiny"]
    assert "openai:" in offered["models"] and "anthropic:" not in offered["models"]
    assert {"qdrant", "tavily", "minecraft"} <= set(offered["retrievers"])
    assert offered == options()
    assert "sk-test" not in str(offered)
