"""The Minecraft domain, a plug-in of rat-agent: game data, the wiki corpus and its
retrievers (the bundled offline index, the live wiki), the plan simulator and reference
planner, plan repair on crafting knowledge, and the planning benchmark.

It plugs in as any user's domain would, by the entry points in pyproject.toml
(`rat_agent.plugins`): retrievers "minecraft", "minecraft-wiki" and "minecraft-auto",
the repair "minecraft", the benchmark "minecraft". The core never imports this package.
"""

from rat_agent.retrieval.settings import DOMAIN_KEY, EVIDENCE_KEY, PENALTY_KEY

DOMAIN = "minecraft"
# What its retrievers declare: the domain (its plan repair follows it), 150 tokens of
# passages a step, and the wiki's main facts first (a position penalty in evidence.select).
METADATA = {DOMAIN_KEY: DOMAIN, EVIDENCE_KEY: 150, PENALTY_KEY: 0.1}
