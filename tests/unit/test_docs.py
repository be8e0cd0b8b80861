"""docs/: the pages that are generated from the code are what the code says today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_configuration_page_lists_every_context_field_as_the_code_has_it() -> None:
    script = ROOT / "scripts" / "config_page.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    from dataclasses import fields

    from rat_agent.agent.context import Context

    page = (ROOT / "docs" / "configuration.md").read_text()
    for f in fields(Context):
        assert f"| `{f.name}` (`RAT_{f.name.upper()}`) |" in page
