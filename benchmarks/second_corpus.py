"""Does the default draft do no harm on a second corpus? Python how-to questions in a
user's words over the bundled Python documentation (the pages HumanEval's rag reads).

Draft "auto" was chosen on redis.conf: a reply written from the task's passages where the
best of them is at least `sourced_support` similar to the task, else the model's own
answer. The bundled model is a coder model that knows Python by heart, so these questions
ask whether a sourced draft from loosely related pages costs it what it knew.

20 questions, each with answer keys: the functions and methods a correct answer names,
checked to appear in the documentation before any method ran (the script stops if one
does not). First the support of each question's passages on its own source and on an
unrelated one (redis.conf), as `benchmarks/task_support.py` reports it; then direct, rag
and rat at the defaults, scored as the docs benchmark scores keys (`eval.docs.score`,
`eval.docs.grounded`). Run from the repository root:
`python benchmarks/second_corpus.py` (about an hour on 2 cores; runs are cached in the
eval cache, so a second run computes only what is new). Writes
benchmarks/results/second-corpus.{md,jsonl}. The 20 questions here have been looked at
while changing the draft (a tune split); `--test` runs the 16 held-out ones of
second_corpus_test.py instead and writes second-corpus-test.{md,jsonl}, and `--test2` the
12 of second_corpus_test2.py, written after the name check was mended on faults the 16
showed (second-corpus-test2.{md,jsonl}).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from second_corpus_test import TEST_QUESTIONS
from second_corpus_test2 import TEST2_QUESTIONS
from task_support import support

RESULTS = Path(__file__).parent / "results"
CONTEXT = {
    "retriever": "qdrant",
    "collection": "python-docs",
    "model": "local",
    "k": 3,
    "max_steps": 8,
    "max_tokens": 512,
}
METHODS = ("direct", "rag", "rat")

# (id, question, keys): a key is a name, or a list of names any one of which counts.
QUESTIONS: list[tuple[str, str, list[str | list[str]]]] = [
    (
        "py-01",
        "How do I remove trailing whitespace from the end of a string in Python, "
        "but keep the leading spaces?",
        ["rstrip"],
    ),
    (
        "py-02",
        "In Python, how do I find the three most frequent words in a list of words?",
        ["Counter", "most_common"],
    ),
    (
        "py-03",
        "How do I get the 5 largest numbers from a huge list in Python without "
        "sorting the whole list?",
        ["nlargest"],
    ),
    (
        "py-04",
        "How do I insert a number into an already sorted Python list so that it stays sorted?",
        [["insort", "bisect_left", "bisect_right"]],
    ),
    (
        "py-05",
        "How do I add up a list of floats in Python without losing precision to rounding errors?",
        ["fsum"],
    ),
    (
        "py-06",
        "How do I memoize a Python function so that repeated calls with the same "
        "arguments return a stored result?",
        [["lru_cache", "functools.cache", "@cache"]],
    ),
    (
        "py-07",
        "How do I iterate over two lists of different lengths together in Python, "
        "filling in a default value for the shorter one?",
        ["zip_longest", "fillvalue"],
    ),
    (
        "py-08",
        "How do I loop over every pair of neighbouring items in a Python list (the "
        "first and second, the second and third, and so on)?",
        [["pairwise", "zip("]],
    ),
    (
        "py-09",
        "How do I compare two strings in Python ignoring case, including special "
        "letters such as the German sharp s?",
        ["casefold"],
    ),
    (
        "py-10",
        "How do I remove a known prefix from the start of a Python string, only if "
        "the string starts with it?",
        ["removeprefix"],
    ),
    (
        "py-11",
        "How do I check whether a Python float holds a whole number, such as 3.0?",
        ["is_integer"],
    ),
    (
        "py-12",
        "How do I compute the integer square root of a very large Python integer "
        "exactly, without floating point?",
        ["isqrt"],
    ),
    (
        "py-13",
        "How do I count how many bits are set to 1 in a Python integer?",
        [["bit_count", "bin("]],
    ),
    (
        "py-14",
        "How do I move an existing key to the end of an ordered dictionary in Python?",
        ["OrderedDict", "move_to_end"],
    ),
    (
        "py-15",
        "How do I get the running totals of a list of numbers in Python (1, 3, 6, 10 "
        "for 1, 2, 3, 4)?",
        ["accumulate"],
    ),
    (
        "py-16",
        "How do I split a string on any of several delimiters (commas, semicolons or "
        "spaces) in Python?",
        ["re.split"],
    ),
    (
        "py-17",
        "How do I group consecutive equal items of a sorted Python list together?",
        ["groupby"],
    ),
    (
        "py-18",
        "How do I check whether two floats are equal within a tolerance in Python?",
        ["isclose"],
    ),
    (
        "py-19",
        "How do I turn a Python integer into a fixed number of bytes in big-endian order?",
        ["to_bytes"],
    ),
    (
        "py-20",
        "How do I pad a number with leading zeros to a width of 8 characters in Python?",
        [["zfill", "rjust", ":08"]],
    ),
]


def _check_keys(folder: Path, questions: list[tuple[str, str, list[str | list[str]]]]) -> None:
    """Every key must be a name the documentation gives, before any method runs."""
    text = "\n".join(p.read_text() for p in folder.glob("*.txt"))
    for qid, _, keys in questions:
        for key in keys:
            options = [key] if isinstance(key, str) else key
            if not any(o.strip("@:(").split(".")[-1] in text for o in options):
                sys.exit(f"{qid}: no option of {key!r} is in the documentation")


def main() -> None:
    from rat_agent.eval import docs, humaneval, runner
    from rat_agent.paths import data_dir

    flag = next((a for a in sys.argv[1:] if a in ("--test", "--test2")), "")
    questions = {"--test": TEST_QUESTIONS, "--test2": TEST2_QUESTIONS}.get(flag, QUESTIONS)
    name = "second-corpus" + flag.replace("--", "-")
    humaneval.ensure_docs_collection()
    docs.ensure_collection()
    folder = data_dir() / "python-docs" / f"{sys.version_info[0]}.{sys.version_info[1]}"
    _check_keys(folder, questions)
    supports = {
        qid: (support("python-docs", q, 3, 600), support(docs.COLLECTION, q, 3, 600))
        for qid, q, _ in questions
    }
    cases = [runner.Case(qid, q, {"task": qid, "keys": keys}) for qid, q, keys in questions]
    results = runner.run(
        "python-prose",
        cases,
        METHODS,
        score=docs.score,
        context=CONTEXT,
        seed=RESULTS / f"{name}.jsonl",
        grounding=docs.grounded,
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    by = {(r.task, r.method): r for r in results}
    rows = []
    for qid, _, _ in questions:
        own, other = supports[qid]
        cells = [f"{by[(qid, m)].score:.0%}" if (qid, m) in by else "-" for m in METHODS]
        rows.append(f"| {qid} | {own:.2f} | {other:.2f} | " + " | ".join(cells) + " |")
    lines = [
        f"Code: repository HEAD {commit}; {dt.date.today()}, {platform.machine()}, "
        f"Python {sys.version.split()[0]}.",
        f"Command: `python benchmarks/second_corpus.py{' ' + flag if flag else ''}`",
        "",
        runner.table(results, "keys named"),
        "",
        "| question | support, python-docs | support, redis-docs | " + " | ".join(METHODS) + " |",
        "|---|---|---|" + "---|" * len(METHODS),
        *rows,
    ]
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / f"{name}.md").open("a") as out:
        out.write("\n" + "\n".join(lines) + "\n")
    (RESULTS / f"{name}.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in results))


if __name__ == "__main__":
    main()
