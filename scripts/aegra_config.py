"""aegra.json from langgraph.json: the same graphs, named by file, as Aegra loads them.

langgraph.json names each graph by module ("rat_agent.agent.graph:graph"); Aegra imports a
graph from a file path. Its own PostgreSQL checkpointer replaces ours (the "checkpointer"
entry), so that is left out. `--auth module:attribute` names the LangGraph SDK Auth object
that authenticates every request (scripts/serve.sh passes rat_agent.serve.auth:auth), and
`--app module:attribute` the FastAPI app Aegra serves its routes from (rat_agent.serve.app:app),
`--cors-origins` the other origins whose pages may call the API (none by default).
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
    parser.add_argument(
        "--cors-origins",
        default="",
        help="comma-separated origins whose pages may call the API (default: none; the page "
        "at /ui is served from the API's own origin)",
    )
    args = parser.parse_args()
    config = json.loads(args.langgraph_json.read_text())
    graphs = {}
    for name, entry in config["graphs"].items():
        spec = entry["path"] if isinstance(entry, dict) else entry
        graphs[name] = graph_file(spec)
    aegra: dict[str, object] = {"graphs": graphs}
    if args.auth:
        aegra["auth"] = {"path": args.auth}
    # Aegra's default lets every origin call the API from a browser; only those listed may.
    origins = [o.strip() for o in args.cors_origins.split(",") if o.strip()]
    http: dict[str, object] = {"cors": {"allow_origins": origins, "allow_credentials": False}}
    if args.app:
        http["app"] = args.app
    aegra["http"] = http
    print(json.dumps(aegra, indent=2))


if __name__ == "__main__":
    main()
