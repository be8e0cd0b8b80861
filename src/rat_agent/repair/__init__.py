"""Plan repair, the loop's one extension (agent/extension.py): the machinery (plan.py, its
quoting revision in reply.py) and a domain for any source (general.py). A domain plug-in
brings its own `Domain` and registers the `Repair` made of it by entry point
(rat_agent.plugins), as the bundled Minecraft domain does (rat_minecraft/repair.py).

"general" is `rat_agent.repair.general:repair` by import path. The factories live in the
domain modules: a package attribute named like a submodule is replaced by that module once
it is imported, so the path would name a module.
"""

from __future__ import annotations

from rat_agent.repair.plan import Domain, Repair, Settings

__all__ = ["Domain", "Repair", "Settings"]
