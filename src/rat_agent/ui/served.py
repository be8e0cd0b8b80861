"""`make serve`'s app with the page: Aegra loads this one (aegra.json's `http.app`).

Where the workers authenticate (aegra.json names an auth file: `rat serve-keys` made keys),
/ui/options answers only a request with a live key, as the API does: it names the
provider keys the server holds, its defaults and every installed source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rat_agent.serve.app import app, error_body
from rat_agent.serve.keys import KeyRejected
from rat_agent.ui.app import ROUTES, options


def _auth_on() -> bool:
    path = os.environ.get("AEGRA_CONFIG", "")
    try:
        return bool(path) and "auth" in json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return True  # a config that cannot be read: ask for a key rather than answer anyone


async def _keyed_options(request: Request) -> Response:
    if _auth_on():
        from rat_agent.serve.auth import user_of

        try:
            await user_of(request.headers)
        except KeyRejected as exc:
            return JSONResponse(error_body(401, str(exc)), status_code=401)
    return JSONResponse(options())


app.router.routes[:0] = [
    Route("/ui/options", _keyed_options) if getattr(r, "path", "") == "/ui/options" else r
    for r in ROUTES
]
