"""`make serve`'s app with the page: Aegra loads this one (aegra.json's `http.app`)."""

from __future__ import annotations

from rat_agent.serve.app import app
from rat_agent.ui.app import ROUTES

app.router.routes[:0] = ROUTES
