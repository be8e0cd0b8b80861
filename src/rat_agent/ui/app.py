"""The web page at /ui, beside the LangGraph API of the server that serves it.

`langgraph dev` (and so `rat ui`) mounts `app` from langgraph.json's `http.app`; `make serve`
mounts `served` (serve.app's guard, with the page). The page itself is a React build
(`ui/` in the repository, built into `dist/` and shipped in the package): it talks to the
API with the LangGraph JS SDK, from the same origin, so it needs no other server and loads
nothing from outside the machine. /ui/options tells it what this server is set up with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, get_args

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from rat_agent.agent.context import CHOICES, Context
from rat_agent.providers.chat import API_KEY_ENV, LOCAL_MODELS
from rat_agent.providers.embeddings import preload_if_asked
from rat_agent.retrieval.registry import names

DIST = Path(__file__).parent / "dist"


def options() -> dict[str, Any]:
    """The choices the page offers: the server's defaults (its RAT_* settings), the local
    models, a `provider:` for each provider whose key is set, every source and method."""
    ctx = Context()
    keyed = [f"{p}:" for p, env in API_KEY_ENV.items() if any(os.environ.get(e) for e in env)]
    return {
        "models": list(dict.fromkeys([ctx.model, *LOCAL_MODELS, *keyed])),
        "model": ctx.model,
        "retrievers": list(dict.fromkeys([ctx.retriever, *names()])),
        "retriever": ctx.retriever,
        "collection": ctx.collection,
        "methods": list(get_args(CHOICES["method"])),
        "method": ctx.method,
    }


async def _options(_request: Request) -> Response:
    return JSONResponse(options())


async def _to_page(_request: Request) -> Response:
    return RedirectResponse("/ui/")


ROUTES: list[BaseRoute] = [
    Route("/ui", _to_page),
    Route("/ui/options", _options),
    Mount("/ui", StaticFiles(directory=DIST, html=True, check_dir=False), name="ui"),
]

app = Starlette(routes=ROUTES)
preload_if_asked()  # a server loads this module once, at its start
