"""Plan repair, the loop's one extension (agent/extension.py): the machinery (plan.py, its
quoting revision in reply.py) and a plain-words domain to build on (general.py). A domain
plug-in brings its own `Domain` and registers the `Repair` made of it by entry point
(rat_agent.plugins), as the bundled Minecraft domain does (rat_minecraft/repair.py).
"""

from __future__ import annotations

from rat_agent.repair.plan import Domain, Repair, Settings

__all__ = ["Domain", "Repair", "Settings"]
