"""The shell commands written in README.md and docs/*.md, as argument lists.

Every fenced `bash` block is read line by line, continuations joined, comments and `&&`
split off, a leading `VAR=value` kept apart. tests/unit/test_docs.py checks that each one
names what exists (a make target, a `rat` flag, a script's option); the README's quick
starts also run for real (tests/integration/test_doc_commands.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.S)
_ASSIGN = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Command:
    page: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # VAR=value before the command

    @property
    def program(self) -> str:
        """The program, without the virtual environment's folder (.venv/bin/rat is rat)."""
        return self.argv[0].removeprefix(".venv/bin/")

    def __str__(self) -> str:
        return f"{self.page}: {shlex.join(self.argv)}"


def commands(page: Path) -> list[Command]:
    found = []
    for block in _BLOCK.findall(page.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                env = {}
                while words and _ASSIGN.match(words[0]):
                    name, _, value = words.pop(0).partition("=")
                    env[name] = value
                if words:
                    found.append(Command(page.relative_to(ROOT).as_posix(), words, env))
    return found


def every_command() -> list[Command]:
    return [command for page in PAGES for command in commands(page)]
