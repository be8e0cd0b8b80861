"""Build the revision benchmark's cases (src/rat_agent/eval/revision/*.json) from references
nobody on this project wrote: the manual pages of systemd (journald.conf, logind.conf,
timesyncd.conf), OpenSSH (ssh_config) and Git (git-config), as Debian installs them, and
Python's own documentation (pydoc) with the HumanEval tune problems.

Each case is one revision: a task, the steps revised before it, one draft step and the
documents a search returned, with the truth known. Every documented setting whose default
the page states as one plain value (yes/no, true/false, a whole number, a quoted word) gives
three cases:

- agree: the step states the right default; the setting's own passage is among the documents
  (a revision must keep it);
- fix: the step states one wrong value; the documents hold the right one (it must fix it);
- unrelated: the step is right and no document names the setting (it must keep it).

A Python function gives the same three, its planted error a name that does not exist (the
function's documentation names the real one). Before anything is written every key is
checked against its source: the right value in the passage that states it, the wrong one
not given there as the default, no unrelated document naming the setting.

    python benchmarks/revision_cases.py            # writes the data files
    python benchmarks/revision_cases.py --check    # rebuilds and compares, writes nothing
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import pydoc
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "rat_agent" / "eval" / "revisions"
PASSAGE_CHARS = 600  # a passage as a search shows it; the default's sentence is always kept
PER_SOURCE = 60  # settings drawn from each manual at most, spread over the page

# One manual per source: (page, program, file, name line, package).
MANUALS = {
    "systemd": [
        ("journald.conf", "systemd-journald", "/etc/systemd/journald.conf", r" {7}([A-Z]\w+)="),
        ("logind.conf", "systemd-logind", "/etc/systemd/logind.conf", r" {7}([A-Z]\w+)="),
        ("timesyncd.conf", "systemd-timesyncd", "/etc/systemd/timesyncd.conf", r" {7}([A-Z]\w+)="),
        ("systemd-system.conf", "systemd", "/etc/systemd/system.conf", r" {7}([A-Z]\w+)="),
        ("networkd.conf", "systemd-networkd", "/etc/systemd/networkd.conf", r" {7}([A-Z]\w+)="),
        ("pstore.conf", "systemd-pstore", "/etc/systemd/pstore.conf", r" {7}([A-Z]\w+)="),
        ("systemd-sleep.conf", "systemd-sleep", "/etc/systemd/sleep.conf", r" {7}([A-Z]\w+)="),
    ],
    "openssh": [("ssh_config", "the OpenSSH client", "~/.ssh/config", r" {5}([A-Z][A-Za-z0-9]+)")],
    "git": [("git-config", "Git", "~/.gitconfig", r" {7}([a-z][A-Za-z0-9]*\.[A-Za-z0-9.]+)")],
}
PACKAGES = {"systemd": "systemd", "openssh": "openssh-client", "git": "git-man"}
LICENSES = {
    "systemd": "LGPL-2.1-or-later (systemd's manual pages)",
    "openssh": "BSD (OpenSSH's manual pages)",
    "git": "GPL-2.0 (Git's documentation)",
    "python": "PSF-2.0 (Python's documentation, rendered by pydoc)",
}

FLIP = {"yes": "no", "no": "yes", "true": "false", "false": "true", "on": "off", "off": "on"}
# A default as a page states it: a quoted word, or one plain token; the word after it tells
# a bare number from one with a unit ("512 MiB"), which a step could not state as one value.
_VALUE = r'(?:"([^"\s]+)"|([A-Za-z0-9_.@%-]+))(?=[\s.,;)]|$)(?:[.,;)]*\s+([A-Za-z%]+))?'
DEFAULTS = [
    re.compile(r"\b[Dd]efaults? to " + _VALUE),
    re.compile(r"\b[Tt]he default(?: value)? is " + _VALUE),
    re.compile(r"\b()([a-z]+) \(the default\)()"),
]
# Words that may follow a bare number without being its unit.
_AFTER = {"and", "or", "if", "when", "in", "on", "for", "which", "but", "the", "unless", "as"}
NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class Entry:
    source: str
    page: str
    program: str
    file: str
    name: str
    text: str  # the entry's description, one paragraph a line
    value: str  # its default, as the page writes it (quotes dropped)
    quoted: bool


def render(page: str) -> str:
    """A manual page as plain text, one paragraph a line (no wrapping, no hyphenation)."""
    env = {**os.environ, "MANWIDTH": "4000", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["man", "-P", "cat", page], capture_output=True, text=True, env=env)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"no manual page {page}: apt-get install man-db and its package")
    return done.stdout


def entries(source: str) -> Iterator[Entry]:
    for page, program, file, pattern in MANUALS[source]:
        lines = render(page).splitlines()
        name_line = re.compile(pattern + r"\s*$")
        for i, line in enumerate(lines):
            found = name_line.fullmatch(line)
            if not found:
                continue
            indent = len(line) - len(line.lstrip())
            body = []
            for after in lines[i + 1 :]:
                if after.strip() and len(after) - len(after.lstrip()) <= indent:
                    break
                if after.strip():
                    body.append(" ".join(after.split()))
            text = "\n".join(body)
            value = default_of(text)
            if value:
                yield Entry(source, page, program, file, found.group(1), text, *value)


# A default that holds only on some systems or setups: "true on Windows, and false
# elsewhere", "false, except ...", "true if index.threads is enabled".
OTHERWISE = re.compile(r"\b(otherwise|elsewhere|normally|except)\b", re.IGNORECASE)
ONLY_IF = re.compile(r"\W*(if|unless|on)\b(?! unset)", re.IGNORECASE)


def conditional(text: str, end: int) -> bool:
    """Whether the default stated just before `end` holds only under a condition (the rest
    of its sentence says so)."""
    stops = [i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0]
    rest = text[end : min(stops) if stops else len(text)]
    return OTHERWISE.search(rest) is not None or ONLY_IF.match(rest) is not None


def default_of(text: str) -> tuple[str, bool] | None:
    """The one plain default a description states, or None (none, several, or a phrase)."""
    found = set()
    for m in (m for p in DEFAULTS for m in p.finditer(text)):
        if conditional(text, max(m.end(1), m.end(2))):
            return None  # "true on Windows, and false elsewhere": no one right value
        quoted, bare, after = m.group(1), m.group(2), m.group(3)
        if bare and NUMBER.fullmatch(bare) and after and after.lower() not in _AFTER:
            return None  # a number with its unit
        found.add((quoted or bare, bool(quoted)))
    if len({v.lower() for v, _ in found}) != 1:
        return None
    value, quoted = found.pop()
    if NUMBER.fullmatch(value) and value.startswith("0") and value != "0":
        return None  # an octal mask, not a count
    plain = value.lower() in FLIP or NUMBER.fullmatch(value) is not None
    return (value, quoted) if plain or quoted else None


def wrong_value(entry: Entry, others: list[Entry]) -> str | None:
    """One wrong value of the same kind: a boolean flipped, another whole number, or another
    quoted word: one the entry itself offers (but not as a default), else one the same
    manual gives another setting as its default."""
    low = entry.value.lower()
    if low in FLIP:
        flipped = FLIP[low]
        return flipped.capitalize() if entry.value[0].isupper() else flipped
    if NUMBER.fullmatch(entry.value):
        number = int(entry.value)
        return str(number * 2 if number > 1 else number + 2)
    stated = {(m.group(1) or m.group(2)).lower() for p in DEFAULTS for m in p.finditer(entry.text)}
    defaults = " ".join(s for s in re.split(r"(?<=\.) ", entry.text) if re.search(r"[Dd]efault", s))
    offered = [
        w for w in re.findall(r'"([A-Za-z][\w.-]*)"', entry.text) if not mentions(defaults, w)
    ]
    if offered:
        return offered[0]
    words = [o.value for o in others if o.quoted and o.value.lower() not in (low, *FLIP, *stated)]
    words = [w for w in words if not NUMBER.fullmatch(w) and not mentions(entry.text, w)]
    return sorted(words, key=lambda w: (abs(len(w) - len(entry.value)), w))[0] if words else None


def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text, re.I) is not None


def passage(entry: Entry) -> str:
    """The entry as a search shows it: its name, then its text cut to PASSAGE_CHARS, with
    the sentence stating the default kept whole."""
    text = entry.text
    if len(text) > PASSAGE_CHARS:
        start = max(m.start() for p in DEFAULTS for m in p.finditer(text))
        sentence_start = max(text.rfind(". ", 0, start) + 2, text.rfind("\n", 0, start) + 1)
        end = text.find(". ", start)
        end = len(text) if end < 0 else end + 1
        head = text[: max(0, PASSAGE_CHARS - (end - sentence_start))].rsplit(" ", 1)[0]
        text = (head + " ... " if head else "") + text[sentence_start:end]
    suffix = "=" if entry.source == "systemd" else ""
    return f"{entry.name}{suffix}\n{text}"


def document(entry: Entry) -> dict[str, str]:
    return {
        "title": f"{entry.page}({entry.name})",
        "source": f"man {entry.page}",
        "content": passage(entry),
    }


def setting_cases(source: str) -> list[dict[str, object]]:
    every = list(entries(source))
    by_name: dict[str, Entry] = {}
    for e in every:
        by_name.setdefault(e.name, e)
    unique = list(by_name.values())
    usable = [(e, w) for e in unique if (w := wrong_value(e, unique))]
    step = max(1, len(usable) // PER_SOURCE)
    chosen = usable[::step][:PER_SOURCE]
    cases: list[dict[str, object]] = []
    for n, (entry, wrong) in enumerate(chosen):
        others = [o for o in unique if o.name != entry.name and not mentions(o.text, entry.name)]
        # distractors: the entries nearest on the page, as a search for this topic returns
        at = unique.index(entry)
        near = sorted(others, key=lambda o: (abs(unique.index(o) - at), o.name))
        suffix = "=" if source == "systemd" else ""
        task = (
            f"In {entry.program}'s configuration ({entry.file}), what does the {entry.name}"
            f"{suffix} setting control, and what value does it take when it is not set?"
        )
        revised = [f"Open {entry.file} and look for the {entry.name}{suffix} setting."]

        def said(value: str, e: Entry = entry, suffix: str = suffix) -> str:
            shown = f'"{value}"' if e.quoted else value
            return f"When {e.name}{suffix} is not set, {e.program} uses {shown}."

        own, two = document(entry), [document(o) for o in near[:2]]
        place = n % 3
        agree_docs = [*two[:place], own, *two[place:]]
        far = [document(o) for o in near[len(near) // 2 :][:3]]
        for kind, step_text, docs in (
            ("agree", said(entry.value), agree_docs),
            ("fix", said(wrong), agree_docs),
            ("unrelated", said(entry.value), far),
        ):
            cases.append(
                {
                    "id": f"{source}-{entry.page}-{entry.name}-{kind}",
                    "kind": kind,
                    "task": task,
                    "revised": revised,
                    "step": step_text,
                    "documents": docs,
                    "subject": entry.name,
                    "right": entry.value,
                    "wrong": wrong,
                }
            )
    return cases


# A name that does not exist, for each documented Python name a HumanEval solution calls.
MISNAMED = {
    "sorted": "sort",
    "abs": "absolute",
    "enumerate": "enumerated",
    "zip": "zipped",
    "reversed": "reverse",
    "sum": "total",
    "len": "length",
    "max": "maximum",
    "min": "minimum",
    "ord": "char_code",
    "chr": "from_char_code",
    "any": "some",
    "all": "every",
    "round": "round_to",
    "str.join": "str.concat",
    "str.split": "str.tokenize",
    "str.upper": "str.to_upper",
    "str.lower": "str.to_lower",
    "str.isdigit": "str.is_number",
    "str.isalpha": "str.is_letter",
    "str.isupper": "str.is_capital",
    "str.islower": "str.is_small",
    "str.startswith": "str.beginswith",
    "str.endswith": "str.finisheswith",
    "str.replace": "str.substitute",
    "str.strip": "str.trim",
    "str.count": "str.occurrences",
    "str.swapcase": "str.invertcase",
    "str.find": "str.indexof",
    "list.append": "list.push",
    "list.sort": "list.order",
    "list.reverse": "list.flip",
    "list.index": "list.find",
    "dict.get": "dict.fetch",
    "math.sqrt": "math.root",
    "math.floor": "math.round_down",
    "math.ceil": "math.round_up",
}
STRING_METHODS = {name.split(".")[1] for name in MISNAMED if name.startswith("str.")}
LIST_METHODS = {name.split(".")[1] for name in MISNAMED if name.startswith(("list.", "dict."))}


def called(solution: str) -> list[str]:
    """The documented names a solution calls, in order: builtins, math, str and list methods
    (a method is str's where str has it, as `.join` on a string literal)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(solution)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in MISNAMED:
            names.append(f.id)
        elif isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id == "math":
                names.append(f"math.{f.attr}")
            elif f.attr in STRING_METHODS:
                names.append(f"str.{f.attr}")
            elif f.attr in LIST_METHODS:
                names.append(next(n for n in MISNAMED if n.endswith("." + f.attr)))
    return [n for n in dict.fromkeys(names) if n in MISNAMED]


def python_doc(name: str) -> dict[str, str]:
    thing = pydoc.locate(name if "." in name else f"builtins.{name}")
    text = pydoc.plain(pydoc.render_doc(thing, title="%s"))
    text = "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return {
        "title": f"Python documentation: {name}",
        "source": f"pydoc {name}",
        "content": text[:PASSAGE_CHARS],
    }


def purpose(name: str) -> str:
    """What the documentation says the name does, its verb as written ("return the ...")."""
    thing = pydoc.locate(name if "." in name else f"builtins.{name}")
    for paragraph in (pydoc.getdoc(thing) or "").split("\n\n"):
        first = paragraph.strip().split("\n", 1)[0]
        if not first or "->" in first or re.match(r"[\w.]+\(", first):
            continue  # a signature line, not a sentence
        sentence = " ".join(paragraph.split()).split(". ")[0].rstrip(".")
        sentence = sentence[sentence.find("return ") :] if ", return " in sentence else sentence
        return sentence[0].lower() + sentence[1:]
    return "do what the task needs"


def code_cases(per: int = 1) -> list[dict[str, object]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from rat_agent.eval.humaneval import SPLITS, load_problems, question

    problems = load_problems()
    tune = [problems[i] for i in SPLITS["tune"]]
    pool = sorted(MISNAMED)
    cases: list[dict[str, object]] = []
    used: dict[str, int] = {}
    for n, problem in enumerate(tune):
        names = called(problem["prompt"] + problem["canonical_solution"])
        # the name used least so far, so the cases spread over the documentation
        for name in sorted(names, key=lambda a: used.get(a, 0))[:per]:
            used[name] = used.get(name, 0) + 1
            wrong = MISNAMED[name]
            own = python_doc(name)
            others = [
                python_doc(o) for o in pool if o != name and o.split(".")[-1] != name.split(".")[-1]
            ]
            start = (n * 7) % len(others)
            two = (others * 2)[start : start + 2]
            far = (others * 2)[start + 5 : start + 8]
            far = [d for d in far if not mentions(d["content"], name.split(".")[-1])][:3]
            place = n % 3
            agree_docs = [*two[:place], own, *two[place:]]
            what = purpose(name)
            short = problem["task_id"].replace("/", "-")

            def said(used: str, what: str = what) -> str:
                return f"Call `{used}()` to {what}."

            for kind, step_text, docs in (
                ("agree", said(name), agree_docs),
                ("fix", said(wrong), agree_docs),
                ("unrelated", said(name), far),
            ):
                cases.append(
                    {
                        "id": f"python-{short}-{name}-{kind}",
                        "kind": kind,
                        "task": question(problem),
                        "revised": [],
                        "step": step_text,
                        "documents": docs,
                        "subject": name,
                        "right": name,
                        "wrong": wrong,
                    }
                )
    return cases


def check(case: dict[str, object]) -> None:
    """Every key against its source, before any model sees the case."""
    docs = case["documents"]
    assert isinstance(docs, list) and docs, case["id"]
    right, wrong, subject = str(case["right"]), str(case["wrong"]), str(case["subject"])
    assert right.lower() != wrong.lower(), case["id"]
    text = "\n".join(d["content"] for d in docs)
    key = subject.split(".")[-1] if case["id"].startswith("python-") else subject
    if case["kind"] == "unrelated":
        assert not mentions(text, key), f"{case['id']}: a document names {key}"
        return
    own = [
        d for d in docs if d["content"].startswith(subject) or d["source"].endswith(" " + subject)
    ]
    assert len(own) == 1, f"{case['id']}: the subject's own passage is not shown once"
    if case["id"].startswith("python-"):
        assert mentions(own[0]["content"], key), case["id"]
        where = wrong if "." in wrong else f"builtins.{wrong}"
        assert pydoc.locate(where) is None, f"{case['id']}: {wrong} exists in Python"
        return
    stated = default_of(own[0]["content"].split("\n", 1)[1])
    assert stated and stated[0] == right, f"{case['id']}: the passage states {stated}, not {right}"
    assert str(case["step"]).count(right if case["kind"] == "agree" else wrong) >= 1, case["id"]


def version(package: str) -> str:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def build() -> dict[str, dict[str, object]]:
    files: dict[str, dict[str, object]] = {}
    for source in MANUALS:
        pages = ", ".join(
            f"{p}(5)" if p != "git-config" else "git-config(1)" for p, *_ in MANUALS[source]
        )
        files[source] = {
            "name": source,
            "title": f"{pages} from Debian's {PACKAGES[source]} {version(PACKAGES[source])}",
            "license": LICENSES[source],
            "cases": setting_cases(source),
        }
    files["python"] = {
        "name": "python",
        "title": f"Python {sys.version_info[0]}.{sys.version_info[1]}'s documentation (pydoc) "
        "with HumanEval's tune problems (40-99)",
        "license": LICENSES["python"],
        "cases": code_cases(),
    }
    for data in files.values():
        for case in data["cases"]:  # type: ignore[union-attr]
            check(case)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    args = parser.parse_args()
    files = build()
    stale = []
    for name, data in files.items():
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        path = OUT / f"{name}.json"
        print(f"{name}: {len(data['cases'])} cases")  # type: ignore[arg-type]
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if stale:
        sys.exit(f"out of date: {', '.join(stale)}")


if __name__ == "__main__":
    main()
