"""Plan repair, the loop's one extension (agent/extension.py): the machinery (plan.py) and
its domains, general (general.py) and crafting (crafting.py, on Minecraft's knowledge).

The core names an extension by import path, as it names retrievers: "minecraft" is
`rat_agent.repair.crafting:repair`, "general" is `rat_agent.repair.general:repair`. The
factories live in the domain modules: a package attribute named like a submodule is
replaced by that module once it is imported, so the path would name a module.
"""

from __future__ import annotations

from rat_agent.repair.plan import Domain, Repair, Settings

__all__ = ["Domain", "Repair", "Settings"]
