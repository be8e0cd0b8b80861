"""API keys for `make serve`: a file of hashed keys, each standing for one user.

A key reads `rat_<id>_<secret>`. The id names it in `rat serve-keys list|revoke` and finds
its record; the secret, 256 random bits, is kept only as its SHA-256. A fast hash suffices
for a random secret that long (a password needs a slow one because it can be guessed).
The file is JSON, readable by its owner only, and replaced whole on every change, so a
worker reading it mid-change sees the old version or the new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from rat_agent import served
from rat_agent.errors import ConfigError
from rat_agent.paths import data_dir, write_atomic

KEY_FORMAT = re.compile(r"rat_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
USER_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_VERSION = 1


class KeyRejected(Exception):
    """A request's key does not open the server; the message is safe to show its sender."""


@dataclass(frozen=True)
class KeyRecord:
    id: str
    user: str
    sha256: str
    created: str
    label: str = ""
    revoked: str = ""


def key_file() -> Path:
    """Where the keys live: `RAT_SERVE_KEYS`, else serve-keys.json in the data folder."""
    named = os.environ.get("RAT_SERVE_KEYS")
    return Path(named) if named else data_dir() / "serve-keys.json"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class KeyFile:
    """The key file at `path` (default `key_file()`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or key_file()
        self._seen: tuple[tuple[int, int, int], dict[str, KeyRecord]] | None = None

    def records(self) -> list[KeyRecord]:
        """Every key made, revoked ones included; none when the file does not exist."""
        try:
            raw = json.loads(self.path.read_text())
            return [KeyRecord(**entry) for entry in raw["keys"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the key file {self.path} is unreadable: {exc}") from exc

    def add(self, user: str, label: str = "") -> tuple[KeyRecord, str]:
        """A new key for `user`: its record and the key itself, which is never stored."""
        if not USER_FORMAT.fullmatch(user):
            raise ConfigError(
                f"user {user!r}: use 1-64 letters, digits and . _ @ -, starting with a "
                "letter or digit"
            )
        secret = secrets.token_urlsafe(32)  # 43 characters
        with self._locked():
            records = self.records()
            taken = {r.id for r in records}
            ident = secrets.token_hex(6)
            while ident in taken:
                ident = secrets.token_hex(6)
            record = KeyRecord(ident, user, _digest(secret), _now(), label.strip())
            self._write([*records, record])
        return record, f"rat_{ident}_{secret}"

    def revoke(self, which: str) -> list[KeyRecord]:
        """Revoke the key with id `which` (or the key itself), or every key of user `which`."""
        parsed = KEY_FORMAT.fullmatch(which)
        ident = parsed.group(1) if parsed else which
        with self._locked():
            records = self.records()
            hit = [r for r in records if not r.revoked and ident in (r.id, r.user)]
            if not hit:
                raise ConfigError(f"no key with id or user {ident!r} is in use in {self.path}")
            when = _now()
            gone = {r.id for r in hit}
            self._write([_revoked(r, when) if r.id in gone else r for r in records])
        return [_revoked(r, when) for r in hit]

    def user_of(self, key: str) -> str:
        """The user `key` stands for; KeyRejected when it is malformed, unknown or revoked."""
        parsed = KEY_FORMAT.fullmatch(key)
        if not parsed:
            raise KeyRejected("malformed API key: rat keys read rat_<id>_<secret>")
        ident, secret = parsed.groups()
        record = self._by_id().get(ident)
        if (
            record is None
            or record.revoked
            or not hmac.compare_digest(record.sha256, _digest(secret))
        ):
            raise KeyRejected("invalid API key: unknown or revoked")
        return record.user

    def live(self, user: str) -> bool:
        """Whether `user` holds a key that is not revoked."""
        return any(r.user == user and not r.revoked for r in self._by_id().values())

    def _by_id(self) -> dict[str, KeyRecord]:
        """The records by id, read again only when the file was replaced (a key made or
        revoked), so a revocation holds on every worker from its next request."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            raise KeyRejected(
                "the server has no API keys: make one with `rat serve-keys add`"
            ) from None
        except OSError as exc:
            raise ConfigError(f"the key file {self.path} is unreadable: {exc}") from exc
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if self._seen is None or self._seen[0] != seen:
            self._seen = (seen, {r.id: r for r in self.records()})
        return self._seen[1]

    def _write(self, records: list[KeyRecord]) -> None:
        body = {"version": _VERSION, "keys": [asdict(r) for r in records]}
        write_atomic(self.path, json.dumps(body, indent=2) + "\n", private=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time (two `rat serve-keys add` at once must both land); readers
        need no lock, as the file is replaced whole."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(f".{self.path.name}.lock")
        with lock.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _revoked(record: KeyRecord, when: str) -> KeyRecord:
    return KeyRecord(**{**asdict(record), "revoked": when})


_files: dict[Path, KeyFile] = {}


def check_user(user: str) -> None:
    """ConfigError when a served run's user holds no live key on this server any more: a
    run starts only for a user who could still make it, so the crons and queued runs of a
    user whose keys were revoked stop with the keys. A server that keeps no key file (its
    users come from another auth) is not checked."""
    if not user:
        return
    path = key_file()
    if not path.exists():
        return
    keys = _files.setdefault(path, KeyFile(path))
    try:
        live = keys.live(user)
    except KeyRejected:  # the file went away between the two looks
        return
    if not live:
        raise ConfigError(f"user {user!r} holds no live API key on this server: runs as them stop")


# Every served run checks its user here before each model call and search.
served.attach(check_user)


def served_database() -> str | None:
    """The URL of `make serve`'s database (scripts/serve.sh keeps it in $RAT_SERVE_DIR), or
    None where no server was set up on this machine."""
    import getpass

    folder = Path(os.environ.get("RAT_SERVE_DIR") or f"/tmp/rat-serve-{getpass.getuser()}")
    try:
        return (folder / "database_url").read_text().strip() or None
    except OSError:
        return None


def disable_crons(user: str, database: str) -> int:
    """Disable every cron of `user` in the served database: a cron fires with no request,
    so no key is asked for, and a revoked user's would start a failing run every time."""
    import psycopg

    with psycopg.connect(database, autocommit=True, connect_timeout=10) as conn:
        done = conn.execute(
            "UPDATE crons SET enabled = false WHERE user_id = %s AND enabled", [user]
        )
        return done.rowcount
