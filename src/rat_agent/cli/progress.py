"""Progress for a stderr that is not a terminal (a log file, a pipe, `nohup`): Rich's bar
draws nothing there, so a long `rat ingest` or `rat eval` would say nothing for hours."""

from __future__ import annotations

import time

from rich.console import Console


class PlainProgress:
    """Progress as lines: each stage's start and end, and between them a line every
    `every_s` seconds at most."""

    def __init__(self, err: Console, every_s: float = 10.0) -> None:
        self.err = err
        self.every_s = every_s
        self.shown: tuple[str, int] = ("", -1)
        self.last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        new_stage = stage != self.shown[0]
        due = new_stage or done >= total or now - self.last >= self.every_s
        if total and (stage, done) != self.shown and due:
            self.err.print(f"{stage} {done}/{total}", highlight=False)
            self.shown, self.last = (stage, done), now
