"""What a model declares beyond the paper's defaults: one table, one entry a measured need.

A model without an entry runs RAT as the paper does (a chain-of-thought draft, an llm query
per step). An entry changes a default only with the held-out figure that justifies it, and
a run's context still overrides it: the profile fills "auto", never a value a user chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Profile:
    # `draft` for "auto" where the run writes an answer ("": the paper's "cot"); a plan
    # (plan repair's steps) keeps "cot", as its figures were measured with it.
    draft: Literal["", "cot", "sourced", "direct", "rag"] = ""
    # Where the draft is a method's answer and the query prompt is the shipped one, each
    # paragraph's own text is its query, with no call; a plan and a chain of thought keep
    # the model's queries, as their figures were measured with them.
    query_by_text: bool = False
    # The server enforces a JSON schema on a reply (llama.cpp turns it into a grammar), so
    # a reply that must quote one of the lines shown (plan repair's revision) can.
    schema: bool = False
    # The server continues a reply begun in the prompt under a grammar for the rest, so the
    # part of a reply the schema fixes (plan repair's quote, where one line is quotable) is
    # read as prompt rather than written token by token.
    prefill: bool = False
    # A revision stands only where every word it adds is in the document that bears most
    # on the step (terms.unsupported); otherwise the draft stands, and the step says why.
    grounded: bool = False
    # A step whose best passage matches it less than this (retrieval.evidence's cosine) is
    # kept as drafted, without the revision's call: no passage bears on it.
    bearing_floor: float = 0.0
    why: str = ""  # the measurement behind each entry, with its command


PAPER = Profile()

PROFILES: dict[str, Profile] = {
    "local": Profile(
        draft="rag",
        query_by_text=True,
        schema=True,
        prefill=True,
        grounded=True,
        bearing_floor=0.5,
        why="query_by_text (each paragraph of the answer draft is its own query): on "
        "the login.defs held-out 20, 52% of keys named, as with the model's queries, every "
        "task tied, at 3.5 model calls, 2,538 prompt tokens processed and 49 s against 6.2, "
        "2,763 and 59 s (rag: 52%, 20 s; benchmarks/results/login-local-test-querytext-84bfb2c.md, "
        "benchmarks/results/login-local-test-84bfb2c.md); on the redis.conf tune 10, 47% "
        "either way at 3.6 calls and 52 s against 6.5 and 63 s "
        "(benchmarks/results/docs-local-tune10-querymode-3f53620.md). "
        "bearing_floor: on the same 233 fresh cases, grounded and the floor (read off the "
        "other 67) broke 3% of right steps against grounded's 7%, fixed the same 33%, and "
        "asked no revision for 70 of 233 (all 300: 4% against 8%, 35% fixed each; python "
        "benchmarks/revision_guard.py --floor 0.5, the same file); end to end on the PHP "
        "held-out 20 it kept 57 of 135 steps with no call, answers as before it (won 1, "
        "lost 1), rat's seconds 7.9x rag's -> 7.1x (benchmarks/results/php-local-test-4837d96.md). "
        "grounded: on the revision benchmark's 233 fresh cases (the rule was written on "
        "the other 67), the paper's revision fixed 55% of wrong steps and broke 28% of right "
        "ones; kept only where its documents give what it adds, 33% and 7% (all 300: 55%/28% "
        "against 35%/8%; python benchmarks/revision_guard.py, "
        "benchmarks/results/revision-local-grounded.md). "
        "draft 'rag' (rag's answer, its paragraphs checked, the response with no rewrite): "
        "on the redis.conf tune 10, 47% of keys named, rag 47% in the same run, at 3.5x "
        "rag's seconds (59 s), against 'sourced' 37% at 10x "
        "(benchmarks/results/docs-local-tune10-answer-5f8f7f9.md, where 'rag' was named "
        "'answer'); on the PHP held-out 20, 54% against rag's 59% (tied 19; lost 1 to a "
        "reply-parsing misread since fixed) at 3.9x rag's seconds, against the sourced "
        "chain of thought's 42% at 7.1x (benchmarks/results/php-local-test-f0e3652.md); "
        "with the fix and paragraph queries, 59% = rag, every task tied, at 3.1x (a tune "
        "set for the fix; benchmarks/results/php-local-test-0b4a2fe.md); on the fresh "
        "login.defs 20, 52% = rag, every task tied "
        "(benchmarks/results/login-local-test-84bfb2c.md). "
        "Before it, 'sourced': "
        "on the PostgreSQL held-out 20, 28% of keys named with a sourced draft "
        "(rag 30% in the same run) against 12% with the chain of thought at a5579f8; won 6 "
        "tasks from it and lost 2 (benchmarks/results/postgres-local-test-sourced-b247f9b.md)"
        "; on the redis.conf tune 10 in one run, 37% against 12%, won 4 and lost 1 "
        "(benchmarks/results/docs-local-tune10-draft-b247f9b.md). "
        "schema: plan repair's quote is one of the lines shown; the Minecraft held-out "
        "60 (45% executable, benchmarks/results/minecraft-local-test60-4924526.md) was "
        "measured with it. prefill: that quote, where one line is quotable, is sent as the "
        "reply's start; on 6 Minecraft tune tasks, completion tokens -49%, wall time -17%, "
        "3 plans executable against 2 (benchmarks/results/minecraft-local-tune-prefill.md); "
        "the demo -22% (benchmarks/results/demo.md)",
    ),
    "local-tiny": Profile(schema=True, prefill=True, why="the same server as 'local'"),
}


def profile_of(model: str) -> Profile:
    """The profile of the model a context names; the paper's defaults for any other."""
    return PROFILES.get(model.strip(), PAPER)
