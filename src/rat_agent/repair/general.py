"""A plan repair domain for a plug-in to build on (docs/domains.md): a prerequisite the
revision names, supported by the passage it quotes and done by no earlier step, is inserted
as a step.

No counted ledger, no goal and no dropped steps: what a step "provides" is what its words
say. A step is done by an earlier one when that step names most of its words; a need is
supported when the quoted line names most of its words. It is no run option of its own: on
the login.defs held-out 20 it named 18% of keys against the shipped defaults' 52%
(benchmarks/results/login-local-test-general-9b07499.md), so a domain that builds on it
brings the measurement that earns it there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rat_agent.agent.context import Context
from rat_agent.agent.state import Step
from rat_agent.repair import reply
from rat_agent.repair.reply import Revision

_NEEDS = "what the documents say must be done before this step, as short actions"
_EXAMPLE_LINE = "2a. X needs the Y module: load Y first, then set x-mode to full."
REVISE = (
    "Check the current step against the documents that follow. Reply in exactly three "
    "lines:\n"
    "FACT: the one line of the documents, with its label, that bears most directly on the "
    "current step, copied word for word; or NONE if no line bears on it\n"
    "STEP: the current step rewritten to agree with that line, using the exact names, "
    "settings, commands and values it gives, as one short line; or the current step as it "
    "is, if the line confirms it\n"
    f"NEEDS: {_NEEDS}, separated by commas; or none\n"
    f'For example, for the draft step "Turn on the X feature." and the line "{_EXAMPLE_LINE}":\n'
    f"FACT: {_EXAMPLE_LINE}\n"
    "STEP: Turn on the X feature by setting x-mode to full.\n"
    "NEEDS: Load the Y module"
)
REVISE_JSON = (
    'Check the current step against the documents that follow. Reply with JSON: "fact" is '
    "the one line of the documents, with its label, that bears most directly on the current "
    'step, or "none" if no line bears on it; "step" is the current step rewritten to agree '
    "with that line, using the exact names, settings, commands and values it gives, or the "
    f'current step as it is if the line confirms it; "needs" lists {_NEEDS}.\n'
    f'For example, for the draft step "Turn on the X feature." and the line "{_EXAMPLE_LINE}", '
    f'reply {{"fact": "{_EXAMPLE_LINE}", "step": "Turn on the X feature by setting x-mode '
    'to full.", "needs": ["Load the Y module"]}'
)

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-]*")
_COMMON_WORDS = (
    "a an the of to in on at for by with from and or is are be it its this that your you "
    "then first before after set use using make sure do does must should can"
)
_COMMON = frozenset(_COMMON_WORDS.split())
COVERED = 0.7  # a step names this share of a need's words: it does what the need asks


def _words(text: str) -> set[str]:
    return {w.strip(".-") for w in _WORD.findall(text.lower()) if w not in _COMMON}


def _covers(text: str, need: str) -> bool:
    wanted = _words(need)
    return bool(wanted) and len(wanted & _words(text)) >= COVERED * len(wanted)


class General:
    """The general domain of plan repair (repair/plan.Domain)."""

    goals = False
    drops = False

    def instruction(self, as_json: bool) -> str:
        return REVISE_JSON if as_json else REVISE

    def quotable(self, documents: Sequence[dict[str, str]], ctx: Context) -> list[str]:
        return reply.facts(documents)

    def schema(self, quotable: Sequence[str]) -> dict[str, Any]:
        return reply.revision_schema(quotable, needs=True)

    def reply(self, found: Revision, makes: str) -> tuple[Revision, str]:
        """With no line quoted there is no evidence: the step stays as drafted, and needs
        nothing. Nothing is dropped."""
        if not found.fact or found.drop is not None:
            return Revision(""), "no passage bears on it; the draft was kept"
        return found, ""

    def mend(self, step: str, needs: Sequence[str], fact: str, makes: str) -> tuple[str, list[str]]:
        return step, list(needs)

    def grounded(self, needs: Sequence[str], fact: str) -> list[str]:
        return [need for need in needs if _covers(fact, need)]

    def missing(
        self,
        needs: Sequence[str],
        steps: Sequence[Step],
        waiting: Sequence[str] = (),
        step: str = "",
        fact: str = "",
    ) -> list[str]:
        done = [s["revised"] for s in steps if s["status"] != "dropped"]
        return [
            need
            for need in needs
            if not any(_covers(text, need) for text in [*done, step, *waiting] if text)
        ]

    def unsupported(
        self, needs: Sequence[str], step: str, fact: str, steps: Sequence[Step]
    ) -> list[str]:
        return []

    def goal_of(self, reply: str) -> str:
        return reply.strip()

    def makes_goal(self, step: str, goal: str) -> bool:
        return False

    def goal_step(self, goal: str, drafts: Sequence[str]) -> int | None:
        return None

    def resolved(self, makes: str, steps: Sequence[Step]) -> int | None:
        return None

    def draft_for(self, need: str) -> str:
        need = need.strip().rstrip(".")
        return f"{need[:1].upper()}{need[1:]}."
