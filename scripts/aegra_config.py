"""aegra.json from langgraph.json: the same graphs, named by file, as Aegra loads them.

langgraph.json names each graph by module ("rat_agent.agent.graph:graph"); Aegra imports a
graph from a file path. Its own PostgreSQL checkpointer replaces ours (the "checkpointer"
entry), so that is left out. `--auth module:attribute` names the LangGraph SDK Auth object
that authenticates every request (scripts/serve.sh passes rat_agent.serve.auth:auth), and
`--app module:attribute` the FastAPI app Aegra serves its routes from (rat_agent.serve.app:app).
Usage: python scripts/aegra_config.py langgraph.json [--auth M:A] [--app M:A] > aegra.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path


def graph_file(spec: str) -> str:
    module, _, attribute = spec.partition(":")
    if module.endswith(".py") or "/" in module:
        return spec  # already a file
    found = importlib.util.find_spec(module)
    if found is None or not found.origin:
        raise SystemExit(f"aegra_config: cannot find the module {module!r} of graph {spec!r}")
    return f"{Path(found.origin).resolve()}:{attribute}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("langgraph_json", type=Path)
    parser.add_argument("--auth", default="", help="module:attribute of the Auth object")
    parser.add_argument("--app", default="", help="module:attribute of the FastAPI app")
    args = parser.parse_args()
    config = json.loads(args.langgraph_json.read_text())
    graphs = {}
    for name, entry in config["graphs"].items():
        spec = entry["path"] if isinstance(entry, dict) else entry
        graphs[name] = graph_file(spec)
    aegra: dict[str, object] = {"graphs": graphs}
    if args.auth:
        aegra["auth"] = {"path": args.auth}
    if args.app:
        aegra["http"] = {"app": args.app}
    print(json.dumps(aegra, indent=2))


if __name__ == "__main__":
    main()
