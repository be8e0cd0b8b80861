"""Plan repair, the loop's one extension (agent/extension.py): the machinery (plan.py) and
its domains, general (general.py) and crafting (crafting.py, on Minecraft's knowledge).

The core names an extension by import path, as it names retrievers: "minecraft" is
`rat_agent.repair:crafting`, "general" is `rat_agent.repair:general`.
"""

from __future__ import annotations

from rat_agent.repair.plan import Domain, Repair


def crafting() -> Repair:
    from rat_agent.repair.crafting import Crafting  # lazy: it loads the game's data

    return Repair(Crafting())


def general() -> Repair:
    from rat_agent.repair.general import General

    return Repair(General())


__all__ = ["Domain", "Repair", "crafting", "general"]
