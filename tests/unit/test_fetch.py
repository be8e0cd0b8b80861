"""The guarded fetcher, against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rat_agent.retrieval.web.fetch import FetchError, UnsafeURLError, afetch, fetch, private_allowed


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
        "http:///nohost",
    ],
)
def test_only_http_and_https(url: str) -> None:
    with pytest.raises(UnsafeURLError):
        fetch(url, allow_private=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://172.16.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::127.0.0.1]/",  # IPv4-compatible
        "http://[::ffff:0:127.0.0.1]/",  # SIIT
        "http://[64:ff9b::127.0.0.1]/",  # NAT64
        "http://[64:ff9b::a00:1]/",  # NAT64 to 10.0.0.1
        "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
        "http://[2002:c0a8:1::1]/",  # 6to4 of 192.168.0.1
        "http://0.0.0.0/",
        "http://100.64.0.1/",
        "http://localhost:9/",
    ],
)
def test_non_public_addresses_are_refused_before_connecting(url: str) -> None:
    with pytest.raises(UnsafeURLError, match="non-public address"):
        fetch(url)


def test_a_refusal_names_the_url_but_not_what_its_host_resolves_to() -> None:
    with pytest.raises(UnsafeURLError) as refused:
        fetch("http://localhost:9/")
    message = str(refused.value)
    assert "'http://localhost:9/'" in message and "non-public address" in message
    assert "127.0.0.1" not in message and "::1" not in message


def test_an_ipv6_address_is_judged_by_the_ipv4_address_it_carries() -> None:
    """Decided without connecting: public IPv4 inside NAT64 or 6to4 passes, local-use NAT64
    never does."""
    from rat_agent.retrieval.web.fetch import _check_address

    for public in ("64:ff9b::808:808", "2002:808:808::1", "2606:4700:4700::1111"):
        _check_address("http://x/", "x", public, False)
    with pytest.raises(UnsafeURLError, match="local-use NAT64"):
        _check_address("http://x/", "x", "64:ff9b:1::808:808", False)


def test_loopback_needs_explicit_permission(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    httpserver.expect_request("/page").respond_with_data("hello", content_type="text/plain")
    with pytest.raises(UnsafeURLError):
        fetch(httpserver.url_for("/page"))
    assert httpserver.log == []  # refused before any connection
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    page = fetch(httpserver.url_for("/page"))
    assert (page.text, page.status, page.content_type, page.truncated) == (
        "hello",
        200,
        "text/plain",
        False,
    )


def test_an_allow_list_names_hosts_and_networks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "wiki.internal, 10.0.0.0/8")
    allow = private_allowed()
    assert not isinstance(allow, bool)
    assert allow.hosts == {"wiki.internal"} and len(allow.networks) == 1
    with pytest.raises(UnsafeURLError):
        fetch("http://192.168.1.1/")  # not on the list
    with pytest.raises(FetchError) as info:  # on the list: refused by the network, not us
        fetch("http://10.255.255.1:9/", timeout=0.5)
    assert not isinstance(info.value, UnsafeURLError)


def test_a_redirect_to_a_refused_address_is_refused(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "localhost" itself is allowed; the address it redirects to is not.
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "localhost")
    inner = f"http://127.0.0.1:{httpserver.port}/secret"
    httpserver.expect_request("/go").respond_with_data("", status=302, headers={"Location": inner})
    httpserver.expect_request("/secret").respond_with_data("secret", content_type="text/plain")
    httpserver.expect_request("/file").respond_with_data(
        "", status=301, headers={"Location": "file:///etc/passwd"}
    )
    with pytest.raises(UnsafeURLError, match=r"127\.0\.0\.1"):
        fetch(httpserver.url_for("/go"))
    with pytest.raises(UnsafeURLError, match="only http"):
        fetch(httpserver.url_for("/file"))
    assert [entry[0].path for entry in httpserver.log] == ["/go", "/file"]


def test_redirects_are_followed_and_the_host_name_kept(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    httpserver.expect_request("/old").respond_with_data(
        "", status=301, headers={"Location": "/new?x=1"}
    )
    httpserver.expect_request("/new").respond_with_data("moved", content_type="text/html")
    page = fetch(httpserver.url_for("/old"))
    assert page.text == "moved" and page.url.endswith("/new?x=1")
    # The connection goes to the checked address, but the server still sees its own name.
    assert httpserver.log[1][0].headers["Host"] == f"localhost:{httpserver.port}"


def test_redirect_loops_end(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    httpserver.expect_request("/loop").respond_with_data(
        "", status=302, headers={"Location": "/loop"}
    )
    with pytest.raises(FetchError, match="redirects"):
        fetch(httpserver.url_for("/loop"))


def test_the_body_is_cut_at_the_cap(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/big").respond_with_data("x" * 3_000_000, content_type="text/plain")
    page = fetch(httpserver.url_for("/big"), allow_private=True, max_bytes=10_000)
    assert len(page.content) == 10_000 and page.truncated


def test_content_type_is_checked(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/bin").respond_with_data(
        b"\x00\x01", content_type="application/octet-stream"
    )
    with pytest.raises(FetchError, match="content type"):
        fetch(httpserver.url_for("/bin"), allow_private=True)
    page = fetch(
        httpserver.url_for("/bin"), allow_private=True, accept=("application/octet-stream",)
    )
    assert page.content == b"\x00\x01"


def test_undecodable_bytes_are_replaced(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/bad").respond_with_data(
        b"caf\xe9 ok \xff\xfe end", content_type="text/html; charset=utf-8"
    )
    httpserver.expect_request("/latin").respond_with_data(
        b"caf\xe9", content_type="text/plain; charset=iso-8859-1"
    )
    assert fetch(httpserver.url_for("/bad"), allow_private=True).text == (
        "caf\ufffd ok \ufffd\ufffd end"
    )
    assert fetch(httpserver.url_for("/latin"), allow_private=True).text == "café"


def test_error_statuses_raise_with_the_status(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/gone").respond_with_data("no", status=404)
    with pytest.raises(FetchError) as info:
        fetch(httpserver.url_for("/gone"), allow_private=True)
    assert info.value.status == 404


def test_a_slow_server_times_out(httpserver: HTTPServer) -> None:
    def slow(request: Request) -> Response:
        time.sleep(1.0)
        return Response("late", content_type="text/plain")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"took longer than 0\.2 s"):
        fetch(httpserver.url_for("/slow"), allow_private=True, timeout=0.2)
    assert time.monotonic() - started < 0.9


def test_async_fetch_has_the_same_policy(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    httpserver.expect_request("/page").respond_with_data(
        b"ok \xff", content_type="text/plain", headers={"X": "1"}
    )
    with pytest.raises(UnsafeURLError):
        asyncio.run(afetch(httpserver.url_for("/page")))
    with pytest.raises(UnsafeURLError):
        asyncio.run(afetch("file:///etc/passwd", allow_private=True))
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    page = asyncio.run(afetch(httpserver.url_for("/page"), params={"q": "a b"}))
    assert page.text == "ok \ufffd"
    assert httpserver.log[-1][0].args["q"] == "a b"
    big = "y" * 100_000
    httpserver.expect_request("/big").respond_with_data(big, content_type="text/plain")
    page = asyncio.run(afetch(httpserver.url_for("/big"), max_bytes=500))
    assert len(page.content) == 500 and page.truncated


# --- hostile servers (issue 16): raw sockets on 127.0.0.1, so the bytes are exactly ours ---


@contextlib.contextmanager
def raw_server(send: Callable[[socket.socket], None]) -> Iterator[str]:
    """A one-connection-at-a-time server on 127.0.0.1 that reads the request and then runs
    `send`; its URL. Each handler stops on its own (at most ~30 s), never hangs the tests."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()
    seen: list[bytes] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    seen.append(conn.recv(65536))
                    send(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(40)
        listener.close()
    raw_server.seen = seen  # type: ignore[attr-defined]


def _drip_headers(conn: socket.socket) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Pad: " + b"a" * 100
    for byte in head[:30]:  # a byte a second: httpx's per-read timeout never trips
        conn.sendall(bytes([byte]))
        time.sleep(1.0)


def _drip_body(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
    for _ in range(15):  # a byte every 1.9 s: under the per-read limit, past the deadline
        conn.sendall(b"x")
        time.sleep(1.9)


@pytest.mark.parametrize("send", [_drip_headers, _drip_body], ids=["headers", "body"])
def test_the_time_limit_holds_for_the_whole_exchange(send: Callable[[socket.socket], None]) -> None:
    with raw_server(send) as url:
        started = time.monotonic()
        with pytest.raises(FetchError, match="took longer than 2 s"):
            fetch(url, allow_private=True, timeout=2.0)
        # before: the headers took 30 s; the body was checked only between pieces (3.8 s)
        assert time.monotonic() - started < 3.0


def _respond(encoding: str, body: bytes) -> Callable[[socket.socket], None]:
    def send(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
            + f"Content-Encoding: {encoding}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    return send


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9)


def test_a_gzip_bomb_is_cut_at_the_cap_as_it_is_inflated() -> None:
    bomb = _gzip(b"\0" * 200_000_000)  # ~200 KB on the wire, 200 MB inflated
    tracemalloc.start()
    try:
        with raw_server(_respond("gzip", bomb)) as url:
            page = fetch(url, allow_private=True, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.truncated and len(page.content) == 1_000_000
    assert peak < 20_000_000  # before: each 64 KB chunk inflated whole, ~64 MB at a time


@pytest.mark.parametrize(
    ("encoding", "message"),
    [("gzip, gzip", "stacked content encodings"), ("zstd", "was not asked for")],
)
def test_stacked_or_unasked_encodings_are_refused(encoding: str, message: str) -> None:
    body = _gzip(_gzip(b"hello"))
    with raw_server(_respond(encoding, body)) as url, pytest.raises(FetchError, match=message):
        fetch(url, allow_private=True)


def test_only_bounded_encodings_are_offered_and_deflate_still_reads() -> None:
    raw_deflate = zlib.compress(b"deflated text")[2:-4]  # no zlib header: as some servers send
    for body in (zlib.compress(b"deflated text"), raw_deflate):
        with raw_server(_respond("deflate", body)) as url:
            assert fetch(url, allow_private=True).text == "deflated text"
        request = raw_server.seen[0].lower()  # type: ignore[attr-defined]
        assert b"accept-encoding: gzip, deflate\r\n" in request
