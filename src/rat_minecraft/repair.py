"""Plan repair for crafting, the Minecraft source's extension of the loop.

The revision quotes the corpus line that says how to make the step's thing and writes the
step as a recipe ("Craft 1 furnace from 8 cobblestone in a crafting table"), naming what it
uses. The Minecraft knowledge it runs on is minecraft/'s: a counted ledger (ledger.py) of
what the plan's steps have made and not used up, and the rules of mending.py that put a
revision right against its quote, read as quotes.py writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rat_agent.agent.context import Context
from rat_agent.repair import reply
from rat_agent.repair.plan import Repair, Settings
from rat_agent.repair.reply import Revision
from rat_minecraft import ledger, mending, quotes
from rat_minecraft.names import counted

# A revision quotes the passage that matches its step best: the similarity ranking picks
# the recipe line, and a small model given more to choose from picks worse.
FACT_CHOICES = 1

_STEP = (
    "the current step rewritten to follow that fact, as one action: a verb, the number and "
    'name of what it makes, then "from" the numbers and names of what it uses, then '
    '"with" or "in" any tool or place (scale the fact\'s numbers to what the step makes)'
)
_NEEDS = (
    "what the step uses: each item with its number, and each tool or place (where the fact "
    "offers a choice, A or B, name only A)"
)
# The example is in no game's words, so the model copies the form, not the thing.
REVISE = (
    "Check the current step against the documents that follow. Reply in exactly three "
    "lines:\n"
    "FACT: the one line of the documents, with its label, that says how to make or do what "
    "the current step is about, copied word for word\n"
    f"STEP: {_STEP}; or DROP: the reason, if the task does not need this step\n"
    f"NEEDS: {_NEEDS}, separated by commas; or none\n"
    'For example, for the draft step "Make some dough." and the line "2a. Dough: 2 Flour + '
    '1 Water, in a Mixer, gives 1 Dough.":\n'
    "FACT: 2a. Dough: 2 Flour + 1 Water, in a Mixer, gives 1 Dough.\n"
    "STEP: Mix 1 dough from 2 flour and 1 water in a mixer.\n"
    "NEEDS: 2 flour, 1 water, a mixer"
)
REVISE_JSON = (
    'Check the current step against the documents that follow. Reply with JSON: "fact" is '
    "the line of the documents, with its label, that says how to make or do what the current "
    f'step is about; "step" is {_STEP}, or "DROP: <the reason>" if the task '
    f'does not need this step; "needs" lists {_NEEDS}.\n'
    'For example, for the draft step "Make some dough." and the line "2a. Dough: 2 Flour + '
    '1 Water, in a Mixer, gives 1 Dough.", reply {"fact": "2a. Dough: 2 Flour + 1 Water, '
    'in a Mixer, gives 1 Dough.", "step": "Mix 1 dough from 2 flour and 1 water in a '
    'mixer.", "needs": ["2 flour", "1 water", "a mixer"]}'
)


class Crafting:
    """The Minecraft domain of plan repair (repair/plan.Domain)."""

    goals = True
    drops = True

    def instruction(self, as_json: bool) -> str:
        return REVISE_JSON if as_json else REVISE

    def quotable(self, documents: Sequence[dict[str, str]], ctx: Context) -> list[str]:
        return reply.facts(documents, best=FACT_CHOICES)

    def schema(self, quotable: Sequence[str]) -> dict[str, Any]:
        return reply.revision_schema(quotable, needs=True, none=False)

    def reply(self, found: Revision, makes: str) -> tuple[Revision, str]:
        """One that makes its product from itself (a small model copies the product where
        the input belongs: "Craft 6 sand from 24 sand" for 6 sandstone) is mended by rule:
        a step inserted to make something else makes that; otherwise it takes the counted
        inputs its quote names."""
        if found.drop is not None or not mending.makes_from_itself(found.step):
            return found, ""
        step, needs = mending.with_product(found.step, found.needs, makes)
        if step == found.step:
            step, needs = mending.with_inputs(found.step, found.needs, counted(found.fact))
        if step == found.step:
            return found, "makes its product from itself; its quote names no other input"
        return replace(
            found, step=step, needs=needs
        ), f"made its product from itself (it was: {found.step!r})"

    mend = staticmethod(mending.mend)
    grounded = staticmethod(quotes.grounded)
    missing = staticmethod(ledger.missing)
    unsupported = staticmethod(ledger.unsupported)
    goal_of = staticmethod(ledger.goal_name)
    makes_goal = staticmethod(ledger.makes_goal)
    goal_step = staticmethod(ledger.goal_step)
    resolved = staticmethod(ledger.resolved)

    def draft_for(self, need: str) -> str:
        return f"Get {need}."


def repair() -> Repair:
    """Plan repair on Minecraft's crafting knowledge: `repair` "minecraft"."""
    return REPAIR


# A draft step whose best passage is less similar to it than 0.4 is dropped: the corpus says
# nothing of it (the Minecraft figures in docs/benchmarks.md were measured with it).
REPAIR = Repair(Crafting(), Settings(min_support=0.4))  # one per process; a test may adjust it
