"""The one way this project fetches a URL: ingest, web pages and the wiki all come here.

A URL may come from a document or a search result, so it is untrusted: only http(s), and
the host's addresses are checked before connecting (no loopback, private, link-local or
other non-public address unless the operator sets RAT_ALLOW_PRIVATE_URLS=1). The connection
is then pinned to the checked address (Host header and TLS SNI keep the real name), so a
DNS answer that changes between the check and the connect cannot reach an internal host.
Redirects are followed here, one hop at a time, each hop checked again. httpx does the
HTTP; it has no such policy of its own, hence this module. Proxies from the environment
are not used: they would resolve names out of our sight.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from rat_agent.aio import run_sync
from rat_agent.errors import RetrievalError

MAX_BYTES = 5_000_000
TIMEOUT = 20.0
MAX_REDIRECTS = 5
TEXT_TYPES: tuple[str, ...] = (
    "text/",
    "application/xhtml+xml",
    "application/xml",
    "application/json",
)
USER_AGENT = "rat-agent/0.1 (Retrieval Augmented Thoughts; +https://pypi.org/project/rat-agent)"
_REDIRECTS = {301, 302, 303, 307, 308}
# Only encodings whose output this module bounds as it is produced (zlib's max_length);
# httpx would also offer br and zstd, and decompress each chunk whole before any size cap.
ACCEPT_ENCODING = "gzip, deflate"
_ALLOW_ENV = "RAT_ALLOW_PRIVATE_URLS"


class FetchError(RetrievalError):
    """A URL could not be fetched: network failure, bad status, size or content type."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class _Inflater:
    """A body's Content-Encoding undone with bounded output: `feed` never returns more than
    it is asked for, so a small compressed body cannot balloon in memory (a bomb)."""

    def __init__(self, url: str, header: str):
        codings = [c.strip().lower() for c in header.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1:
            raise FetchError(f"{url}: stacked content encodings {header!r} are refused")
        self.coding = codings[0] if codings else ""
        if self.coding in ("gzip", "x-gzip"):
            self._z: zlib._Decompress | None = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.coding == "deflate":
            self._z = zlib.decompressobj()
        elif not self.coding:
            self._z = None
        else:
            raise FetchError(f"{url}: content encoding {self.coding!r} was not asked for")
        self._url = url
        self._started = False

    def feed(self, data: bytes, most: int) -> bytes:
        """At most `most` bytes of decoded output for `data` (more input waits, unread)."""
        if self._z is None:
            return data[:most]
        try:
            out = self._z.decompress(data, most)
        except zlib.error as exc:
            if self.coding == "deflate" and not self._started:  # raw deflate, no zlib header
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self.feed(data, most)
            raise FetchError(f"{self._url}: the {self.coding} body is corrupt: {exc}") from None
        self._started = True
        return out


class UnsafeURLError(FetchError):
    """Refused by policy before connecting: the scheme, or a non-public address."""


@dataclass(frozen=True)
class Fetched:
    url: str  # the final URL, after redirects
    status: int
    content_type: str  # the media type alone, lowercased
    content: bytes  # at most the size cap
    truncated: bool  # the body was longer than the cap and was cut there
    charset: str | None = None

    @property
    def text(self) -> str:
        """Decoded; bytes that do not decode become U+FFFD rather than an error."""
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset name Python does not know
            return self.content.decode("utf-8", errors="replace")


IP = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class AllowList:
    """Non-public hosts (names as written in URLs) and networks the operator allows."""

    hosts: frozenset[str]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


Allow = bool | AllowList


def private_allowed() -> Allow:
    """RAT_ALLOW_PRIVATE_URLS: "1" allows every non-public address; a comma-separated list
    of host names and networks ("wiki.internal,10.0.0.0/8") allows just those."""
    raw = os.environ.get(_ALLOW_ENV, "").strip()
    if raw.lower() in {"", "0", "false", "no"}:
        return False
    if raw.lower() in {"1", "true", "yes"}:
        return True
    hosts, networks = set(), []
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.add(entry.lower())
    return AllowList(frozenset(hosts), tuple(networks))


@dataclass(frozen=True)
class _Target:
    """A checked URL: the addresses to try, and what to tell the server it is."""

    url: str  # the original URL, for messages and redirects
    host: str
    port: int | None
    addresses: tuple[str, ...]

    def pinned(self, address: str) -> str:
        """The same URL with its host replaced by a checked address."""
        parts = urlsplit(self.url)
        netloc = f"[{address}]" if ":" in address else address
        if self.port is not None:
            netloc += f":{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


def _split(url: str) -> tuple[str, str, int | None]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeURLError(f"invalid URL {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeURLError(f"refused {url!r}: only http and https URLs are fetched")
    if not parts.hostname:
        raise UnsafeURLError(f"refused {url!r}: no host")
    return parts.scheme, parts.hostname, port


def _allowed(host: str, ip: IP, allow: Allow) -> bool:
    if allow is True:
        return True
    if allow is False:
        return False
    return host.lower() in allow.hosts or any(ip in net for net in allow.networks)


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: for local use only
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")  # ::ffff:0:a.b.c.d
_COMPATIBLE = ipaddress.ip_network("::/96")  # ::a.b.c.d (deprecated, still routed by some)


def _carried(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, SIIT, NAT64, 6to4),
    which is where a connection to it ends up: it is judged by that address."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in net for net in (_NAT64, _NAT64_LOCAL, _SIIT)) or (
        ip in _COMPATIBLE and int(ip) > 1  # :: and ::1 are judged as they are
    ):
        return ipaddress.IPv4Address(ip.packed[-4:])
    return None


def _check_address(url: str, host: str, address: str, allow: Allow) -> None:
    ip: IP = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL and not _allowed(host, ip, allow):
            raise UnsafeURLError(f"refused {url!r}: its host is a local-use NAT64 address")
        ip = _carried(ip) or ip
    if (not ip.is_global or ip.is_multicast) and not _allowed(host, ip, allow):
        # the address is not named: what a name resolves to inside the network is not the
        # caller's to learn (a served user could map it host by host)
        raise UnsafeURLError(
            f"refused {url!r}: its host is a non-public address "
            f"(set {_ALLOW_ENV}=1, or to a list of hosts and networks, to allow it)"
        )


def _target(
    url: str, host: str, port: int | None, addresses: Sequence[str], allow: Allow
) -> _Target:
    if not addresses:
        raise FetchError(f"cannot resolve the host of {url!r}")
    for address in addresses:  # every one: a connection may go to any of them
        _check_address(url, host, address, allow)
    return _Target(url, host, port, tuple(addresses))


def _literal(host: str) -> list[str] | None:
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        return None


async def _aresolve(url: str, port: int | None, scheme: str, host: str) -> list[str]:
    literal = _literal(host)
    if literal is not None:
        return literal
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port or (443 if scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except OSError as exc:
        raise FetchError(f"cannot resolve the host of {url!r}: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _request(
    client: httpx.AsyncClient,
    target: _Target,
    address: str,
    headers: Mapping[str, str],
) -> httpx.Request:
    host = target.host if ":" not in target.host else f"[{target.host}]"
    if target.port is not None:
        host += f":{target.port}"
    return client.build_request(
        "GET",
        target.pinned(address),
        headers={
            "User-Agent": USER_AGENT,
            **headers,
            "Host": host,
            "Accept-Encoding": ACCEPT_ENCODING,
        },
        extensions={"sni_hostname": target.host},  # TLS checks the certificate for the name
    )


def _next_url(target: _Target, response: httpx.Response, hops: int) -> str | None:
    """The redirect to follow, or None when this response is the answer."""
    if response.status_code not in _REDIRECTS:
        return None
    location = str(response.headers.get("location", ""))
    if not location:
        raise FetchError(f"{target.url}: redirect without a Location", status=response.status_code)
    if hops >= MAX_REDIRECTS:
        raise FetchError(f"{target.url}: more than {MAX_REDIRECTS} redirects")
    return urljoin(target.url, location)


def _check_response(target: _Target, response: httpx.Response, accept: Sequence[str]) -> str:
    if not 200 <= response.status_code < 300:
        raise FetchError(f"{target.url}: HTTP {response.status_code}", status=response.status_code)
    media = str(response.headers.get("content-type", "")).split(";", 1)[0].strip().lower()
    if not any(media.startswith(kind) for kind in accept):
        raise FetchError(
            f"{target.url}: content type {media or 'missing'!r} is not accepted",
            status=response.status_code,
        )
    return media


def _result(
    target: _Target, response: httpx.Response, media: str, body: bytearray, truncated: bool
) -> Fetched:
    return Fetched(
        target.url, response.status_code, media, bytes(body), truncated, response.charset_encoding
    )


def _with_query(url: str, params: Mapping[str, str] | None) -> str:
    if not params:
        return url
    return str(httpx.URL(url).copy_merge_params(dict(params)))


def fetch(
    url: str,
    *,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    allow_private: Allow | None = None,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    accept: Sequence[str] = TEXT_TYPES,
) -> Fetched:
    """`afetch` for sync code (ingest, the sync retrievers): one policy, one redirect loop."""
    return run_sync(
        afetch(
            url,
            params=params,
            headers=headers,
            allow_private=allow_private,
            max_bytes=max_bytes,
            timeout=timeout,
            accept=accept,
        )
    )


async def afetch(
    url: str,
    *,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    allow_private: Allow | None = None,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    accept: Sequence[str] = TEXT_TYPES,
) -> Fetched:
    """GET `url` under the policy above; the body is cut at `max_bytes` (decoded bytes).

    `timeout` bounds the whole exchange: connecting, every redirect, the headers and the
    body. httpx's own timeout is per read, so a server sending a byte every few seconds
    would never trip it."""
    try:
        async with asyncio.timeout(timeout):
            return await _afetch(url, params, headers or {}, allow_private, max_bytes, accept)
    except TimeoutError:
        raise FetchError(f"{url}: took longer than {timeout:g} s") from None


async def _afetch(
    url: str,
    params: Mapping[str, str] | None,
    headers: Mapping[str, str],
    allow_private: Allow | None,
    max_bytes: int,
    accept: Sequence[str],
) -> Fetched:
    allow = private_allowed() if allow_private is None else allow_private
    current = _with_query(url, params)
    # No per-read timeout of its own: `afetch` bounds the whole exchange.
    async with httpx.AsyncClient(timeout=None, follow_redirects=False, trust_env=False) as client:
        for hops in range(MAX_REDIRECTS + 1):
            scheme, host, port = _split(current)
            addresses = await _aresolve(current, port, scheme, host)
            target = _target(current, host, port, addresses, allow)
            response = await _aconnect(client, target, headers)
            try:
                following = _next_url(target, response, hops)
                if following is not None:
                    current = following
                    continue
                media = _check_response(target, response, accept)
                body, truncated = await _read(target, response, max_bytes)
                return _result(target, response, media, body, truncated)
            except httpx.HTTPError as exc:
                raise FetchError(f"{current}: {type(exc).__name__}: {exc}") from None
            finally:
                await response.aclose()
    raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects")  # pragma: no cover


async def _read(
    target: _Target, response: httpx.Response, max_bytes: int
) -> tuple[bytearray, bool]:
    """The decoded body, at most `max_bytes` of it; True if there was more."""
    inflater = _Inflater(target.url, str(response.headers.get("content-encoding", "")))
    body = bytearray()
    async for raw in response.aiter_raw():
        body += inflater.feed(raw, max_bytes + 1 - len(body))
        if len(body) > max_bytes:
            del body[max_bytes:]
            return body, True
    return body, False


def _why(error: BaseException | None) -> str:
    """The innermost cause ("Connection refused"): async httpx says only "All connection
    attempts failed" and keeps the reason three causes down."""
    while error is not None:
        inner = error.__cause__ or next(
            (a for a in error.args if isinstance(a, BaseException)), None
        )
        if inner is None:
            break
        error = inner
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno)
    return str(error)


async def _aconnect(
    client: httpx.AsyncClient, target: _Target, headers: Mapping[str, str]
) -> httpx.Response:
    error: Exception | None = None
    for address in target.addresses:
        try:
            return await client.send(_request(client, target, address, headers), stream=True)
        except httpx.ConnectError as exc:
            error = exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL is no HTTPError
            raise FetchError(f"{target.url}: {type(exc).__name__}: {exc}") from None
    raise FetchError(f"{target.url}: cannot connect: {_why(error)}")
