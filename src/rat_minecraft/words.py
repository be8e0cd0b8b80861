"""How the step language writes a count, for both of its readers: the plan checker
(reading.py), which reads a step against the game's items, and plan repair (names.py),
which compares the names a step and its quoted line give without the game's data. Each
reads for its own purpose (the grader does not lean on the method's reading); the words
they share are here, once."""

from __future__ import annotations

NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}


def number(token: str) -> int | None:
    """A count written in digits or in words ("3", "three", "a"); None for any other word."""
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token)
