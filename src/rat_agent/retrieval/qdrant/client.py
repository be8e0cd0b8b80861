"""The one Qdrant client per location, shared by the retriever, `rat ingest` and memory.

Qdrant Edge on disk (under the data folder, see edge.py) is the default; QDRANT_URL (and
QDRANT_API_KEY) select a server instead, with nothing else changed. A collection of the
embedded store is open in one process at a time, so clients are shared process-wide.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from qdrant_client import QdrantClient

from rat_agent.errors import ConfigError, RatError, RetrievalError
from rat_agent.paths import data_dir
from rat_agent.providers.embeddings import embedding_model_id
from rat_agent.retrieval.qdrant import legacy
from rat_agent.retrieval.qdrant.edge import EdgeClient, Store
from rat_agent.retrieval.settings import check_collection_name
from rat_agent.served import current_user, own_collection
from rat_agent.text import shorten
from rat_agent.timing import once_cost

MADE_BY = "rat-agent"
LAYOUT = 1  # bump when chunk payloads or vectors change shape
# A collection's metadata says what it holds ("kind": documents, or a thought memory's
# thoughts) and, when a served user made it, whose it is ("owner"); none: the operator's.
DOCUMENTS, THOUGHTS = "documents", "thoughts"

_clients: dict[str, tuple[Store, threading.RLock]] = {}
_clients_lock = threading.Lock()


def location() -> str:
    """Where collections live: the server's URL, or the embedded store's folder."""
    return os.environ.get("QDRANT_URL") or str(data_dir() / "qdrant-edge")


def shown_location() -> str:
    """`location()` as messages show it: a URL without its user, password or query (which
    may hold a key)."""
    where = location()
    if not os.environ.get("QDRANT_URL"):
        return where
    parts = urlsplit(where)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def get_client() -> tuple[Store, threading.RLock]:
    """The shared client for `location()`, with the lock its users hold around calls.

    The embedded store is not thread-safe; a server is, but one lock costs nothing next
    to an HTTP round trip and keeps the two modes alike. Reentrant: a check made under
    the lock may ask `damage`.
    """
    where = location()
    with _clients_lock:
        if where not in _clients:
            with once_cost("qdrant open"):
                _clients[where] = (_open(where), threading.RLock())
        return _clients[where]


def _open(where: str) -> Store:
    if os.environ.get("QDRANT_URL"):
        try:
            with warnings.catch_warnings():
                if _loopback(where):  # plain HTTP to this machine never leaves it
                    warnings.filterwarnings("ignore", "Api key is used with an insecure")
                return QdrantClient(
                    url=where, api_key=os.environ.get("QDRANT_API_KEY") or None, timeout=30
                )
        except Exception as exc:
            raise ConfigError(f"QDRANT_URL={shown_location()!r} is not usable: {exc}") from exc
    try:
        store = EdgeClient(where)
    except OSError as exc:
        raise RetrievalError(f"cannot open the Qdrant folder {where}: {exc}") from exc
    legacy.migrate(data_dir() / "qdrant", store)
    return store


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def damage(name: str) -> str:
    """Why the embedded store's collection `name` is unusable ("" when it is not)."""
    if os.environ.get("QDRANT_URL"):
        return ""
    client, lock = get_client()
    if not isinstance(client, EdgeClient):
        return ""
    with lock:
        return client.damage(name)


def refuse_damaged(name: str) -> None:
    """Before creating `name`: a damaged collection's files still sit where it would go."""
    if why := damage(name):
        raise RetrievalError(why)


def close_clients() -> None:
    with _clients_lock:
        for client, lock in _clients.values():
            with lock:
                client.close()
        _clients.clear()


atexit.register(close_clients)


def collection_metadata(kind: str = DOCUMENTS) -> dict[str, object]:
    """What a new collection records of itself; made in a served user's run, it is theirs."""
    metadata: dict[str, object] = {
        "made_by": MADE_BY,
        "layout": LAYOUT,
        "embedding": embedding_model_id(),
        "kind": kind,
    }
    if user := current_user():
        metadata["owner"] = user
    return metadata


def kind_of(metadata: dict[str, Any]) -> str:
    return str(metadata.get("kind") or DOCUMENTS)  # collections from before "kind" hold documents


def owner_of(metadata: dict[str, Any]) -> str:
    return str(metadata.get("owner") or "")


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    points: int
    ours: bool  # made by `rat ingest` with the embedder this install uses
    damaged: str = ""  # why it is unusable (set aside: see damaged.py)


@contextmanager
def qdrant_errors(what: str = "Qdrant") -> Iterator[None]:
    """The one place Qdrant's own exceptions become our RetrievalError, naming what was
    asked and where (folder or server); our typed errors pass through."""
    try:
        yield
    except RatError:
        raise
    except Exception as exc:
        # One line (Qdrant's own spans three: status, "Raw response content:", the body).
        reason = shorten(str(exc), 300)
        raise RetrievalError(f"{what} at {shown_location()} did not answer: {reason}") from exc


@contextmanager
def locked_client(what: str = "Qdrant") -> Iterator[Store]:
    """The shared client under its lock, its failures through `qdrant_errors`."""
    client, lock = get_client()
    with qdrant_errors(what), lock:
        yield client


def list_collections() -> list[CollectionInfo]:
    infos = []
    with locked_client() as client:
        for item in client.get_collections().collections:
            info = client.get_collection(item.name)
            metadata = info.config.metadata or {}
            ours = metadata.get("made_by") == MADE_BY and (
                metadata.get("embedding") == embedding_model_id()
            )
            infos.append(CollectionInfo(item.name, info.points_count or 0, ours))
        if isinstance(client, EdgeClient):
            for name in client.damaged_collections():
                infos.append(CollectionInfo(name, 0, True, client.damage(name)))
    return sorted(infos, key=lambda c: c.name)


def delete_collection(name: str) -> None:
    check_collection_name(name)
    with locked_client() as client:
        if isinstance(client, EdgeClient):  # a damaged one too
            exists = client.delete_collection(name)
        elif exists := client.collection_exists(name):
            client.delete_collection(name)
    if not exists:
        raise ConfigError(f"there is no collection {name!r} at {shown_location()}")


def no_collection(name: str) -> ConfigError:
    """A served user's "no such collection": the same for one that does not exist and one
    that is not theirs to use, and naming no other collection and no place on the server."""
    return ConfigError(
        f"there is no collection {name!r} of yours or shared on this server: fill one with "
        "the ingest graph"
    )


def documents_for(client: Store, name: str) -> str:
    """The collection a run searches for `name`: in a served user's run, their own of that
    name where they made one, else the operator's; checked. The caller holds the lock."""
    if user := current_user():
        with qdrant_errors():
            if client.collection_exists(own := own_collection(name, user)):
                name = own
    check_collection(client, name)
    return name


def check_collection(client: Store, name: str, *, write: bool = False) -> None:
    """A collection of documents we can search (or, `write`, fill): it exists, `rat ingest`
    made it, with our embedder. In a served user's run it must also be theirs, or for
    reading the operator's. The caller holds the client's lock."""
    user = current_user()
    with qdrant_errors():
        if not client.collection_exists(name):
            if user:
                raise no_collection(name)
            refuse_damaged(name)
            names = [c.name for c in client.get_collections().collections]
            known = f" (there are: {', '.join(sorted(names))})" if names else ""
            raise ConfigError(
                f"there is no Qdrant collection {name!r} at {shown_location()}{known}: "
                f"fill it with `rat ingest PATH --collection {name}`"
            )
        metadata = client.get_collection(name).config.metadata or {}
    if user and owner_of(metadata) not in ({user} if write else {user, ""}):
        raise no_collection(name)
    if metadata.get("made_by") != MADE_BY or metadata.get("layout") != LAYOUT:
        raise ConfigError(
            f"the Qdrant collection {name!r} was not made by this version of "
            "`rat ingest`; ingest into a new collection"
        )
    if kind_of(metadata) != DOCUMENTS:
        raise ConfigError(
            f"the Qdrant collection {name!r} is a thought memory, not documents: search "
            "it with memory=true, and ingest into another collection"
        )
    if metadata.get("embedding") != embedding_model_id():
        raise ConfigError(
            f"the Qdrant collection {name!r} was embedded with another model "
            f"({metadata.get('embedding')}); ingest it again"
        )
