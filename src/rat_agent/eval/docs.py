"""How-to questions over third-party documentation (`rat eval --benchmark docs|postgres|php|login`).

Each set is a dataset file (docs/*.json): its name, the document (the kind of reference a
user brings: prose comments around the settings they document), the collection it is
searched in, and its questions. `docs`: Redis 7.0's example configuration file
(docs/redis.conf, about 106 KB, written by the Redis authors; docs/LICENSE.redis), its
questions split in half, `tune` and `test`. `postgres`: PostgreSQL 15's sample
configuration (docs/postgresql.conf; docs/LICENSE.postgresql), 20 questions, all `test`:
written and checked against the file before any method ran on them, and held out. `php`:
PHP 8.2's production configuration (docs/php.ini; docs/LICENSE.php), 20 questions, all
`test`, written and checked the same way and held out; so is `login`, over the shadow
suite's login.defs as Debian 12 ships it (docs/login.defs; docs/LICENSE.login). Each
question asks how to do something in a user's words, without naming the setting, and carries
answer keys taken from the file: the directives and values a correct answer must name
("maxmemory 2gb", "maxmemory-policy allkeys-lru"). A new set is a new file.

An answer scores the share of its question's keys it names (a key with alternatives counts
once, for any of them), compared without case, spacing or Markdown code marks, each name and
value whole ("uid_min 5000" is not in "sys_uid_min 5000", nor "2gb" in "12gb"). Methods that
retrieve search the file in a Qdrant collection, built on first use with `rat ingest`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rat_agent.errors import ConfigError, RetrievalError
from rat_agent.eval.benchmark import Benchmark, Selection
from rat_agent.eval.runner import Case, Score, Scorer
from rat_agent.paths import data_dir, write_atomic

FOLDER = Path(__file__).parent / "docs"
SPLITS = ("tune", "test")

Key = str | list[str]


@dataclass(frozen=True)
class DocSet:
    """One document and its questions, as its dataset file names them."""

    benchmark: str
    title: str
    document: Path
    questions: Path
    collection: str  # where the methods that retrieve search it


def read_set(path: Path) -> DocSet:
    """A how-to set from its dataset file: its name, title, document (a path relative to
    the file), the Qdrant collection to search it in, and its questions."""
    try:
        data = json.loads(path.read_text())
        return DocSet(
            data["name"],
            data.get("title") or data["name"],
            path.parent / data["document"],
            path,
            data["collection"],
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path} is not a how-to set: a JSON file with name, document, collection and "
            f"questions ({type(exc).__name__}: {exc})"
        ) from None


SETS = {s.benchmark: s for s in map(read_set, sorted(FOLDER.glob("*.json")))}
REDIS, POSTGRES = SETS["docs"], SETS["postgres"]
DOCUMENT, QUESTIONS, COLLECTION = REDIS.document, REDIS.questions, REDIS.collection


def benchmark(docset: DocSet) -> Benchmark:
    """The set as `rat eval` runs it: its questions, keys named, in its own collection."""

    def load(selection: Selection, context: Mapping[str, Any]) -> tuple[list[Case], Scorer]:
        if selection.samples > 1 or selection.exclude:
            raise ConfigError(f"--samples and --exclude are not for {docset.benchmark}")
        if context.get("retriever") == "qdrant" and context.get("collection") == docset.collection:
            ensure_collection(docset)
        return cases(selection.split, selection.tasks, docset), score

    return Benchmark(
        docset.benchmark,
        docset.title,
        "keys named",
        "the share of the question's answer keys (settings and values taken from "
        f"{docset.document.name}) the answer names (rat_agent.eval.docs.score)",
        load,
        context={"retriever": "qdrant", "collection": docset.collection},
        grounding=grounded,
    )


@cache
def load_questions(docset: DocSet = REDIS) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(docset.questions.read_text())["questions"])


def cases(split: str | None = None, limit: int | None = None, docset: DocSet = REDIS) -> list[Case]:
    """The questions of a split (all with None), in file order, at most `limit`."""
    if split is not None and split not in SPLITS:
        raise ConfigError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    chosen = [q for q in load_questions(docset) if split is None or q["split"] == split]
    return [
        Case(q["id"], q["question"], {"task": q["id"], "keys": q["keys"]})
        for q in chosen[: limit or None]
    ]


# Quotes an answer puts around one word ('allkeys-lru'), not the empty string ("").
_QUOTED = re.compile(r"""(['"])([^'"\s]+)\1""")
NEAR = 60  # characters between a setting and its value: "set maxmemory-policy to allkeys-lru"


def _plain(text: str) -> str:
    """Lower case, one space between words, no Markdown code marks, no quotes around a
    single word."""
    return " ".join(_QUOTED.sub(r"\2", text.replace("`", " ")).lower().split())


# A name starts and ends at a word's edge: "uid_min" is not in "sys_uid_min", "90" not in "900"
# ("--maxmemory" still names maxmemory).
_START = r"(?<![\w.])(?<!\w-)"
_END = r"(?![\w-]|\.\w)"


def _names(option: str, plain: str) -> bool:
    """Whether the answer names a key as written ("maxmemory 2gb"), or its setting with the
    value written soon after it ("set maxmemory to 2gb")."""
    wanted = _plain(option)
    if re.search(_START + re.escape(wanted) + _END, plain):
        return True
    setting, _, value = wanted.partition(" ")
    if not value:
        return False
    given = re.compile(_START + re.escape(value) + _END)
    for found in re.finditer(_START + re.escape(setting) + _END, plain):
        value_at = given.search(plain, found.end())
        if value_at and value_at.start() <= found.end() + NEAR:
            return True
    return False


def named(key: Key, answer: str) -> bool:
    """Whether the answer names the key (any of its alternatives)."""
    plain = _plain(answer)
    return any(_names(option, plain) for option in ([key] if isinstance(key, str) else key))


def score(case: Case, answer: str) -> Score:
    keys: Sequence[Key] = case.key["keys"]
    missing = [k if isinstance(k, str) else k[0] for k in keys if not named(k, answer)]
    reason = f"named {len(keys) - len(missing)} of {len(keys)} keys"
    if missing:
        reason += "; missing: " + ", ".join(repr(m) for m in missing)
    return Score((len(keys) - len(missing)) / len(keys), None, reason)


def grounded(case: Case, answer: str, cited: Sequence[str]) -> float:
    """The share of the question's keys the answer names and a passage it cites gives: the
    key's setting, at least, in a cited passage (its value may be the question's own). A
    right answer from memory names its keys and scores none here."""
    keys: Sequence[Key] = case.key["keys"]
    shown = _plain("\n".join(cited))
    found = 0
    for key in keys:
        options = [key] if isinstance(key, str) else key
        settings = {_plain(option).split(" ", 1)[0] for option in options}
        if named(key, answer) and any(gives(shown, s) for s in settings):
            found += 1
    return found / len(keys)


def gives(text: str, setting: str) -> bool:
    """Whether a text names a setting as a word of its own ("maxmemory", not
    "maxmemory-policy")."""
    return re.search(rf"(?<![\w-]){re.escape(setting)}(?![\w-])", text) is not None


def ensure_collection(docset: DocSet = REDIS) -> None:
    """Ingest the document into its collection (incremental: a second run costs a second).

    The file is ingested from one copy under the data folder, so every checkout of the
    package indexes the same source; chunks of any other source are removed, so the
    collection holds the document once (the scores then never depend on where it was run).
    """
    from qdrant_client import models

    from rat_agent.ingest.pipeline import ingest
    from rat_agent.retrieval.qdrant.client import locked_client

    collection = docset.collection
    copy = data_dir() / collection / docset.document.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    text = docset.document.read_text()
    if not copy.exists() or copy.read_text() != text:
        write_atomic(copy, text)  # never a half copy for ingest to index
    report = ingest([str(copy)], collection=collection)
    if report.failed:
        raise RetrievalError(f"could not index {docset.document.name}: {report.failed[0]}")
    others = models.Filter(
        must_not=[
            models.FieldCondition(
                key="metadata.source", match=models.MatchValue(value=str(copy.resolve()))
            )
        ]
    )
    with locked_client() as client:
        client.delete(collection, models.FilterSelector(filter=others), wait=True)


_DIRECTIVE = re.compile(r"^#?\s*([a-z][a-z0-9_-]+)\s", re.M)


def directives(docset: DocSet = REDIS) -> set[str]:
    """Every setting the file documents, commented out or not ("maxmemory", "hz")."""
    return set(_DIRECTIVE.findall(docset.document.read_text()))
