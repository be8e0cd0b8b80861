"""The local chat model against a loopback server that answers as llama.cpp's does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import SecretStr
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rat_agent.agent.nodes import _schema_options
from rat_agent.errors import RequestRejected
from rat_agent.providers.local_chat import LocalChat, LocalServerError

USAGE = {
    "prompt_tokens": 40,
    "completion_tokens": 3,
    "total_tokens": 43,
    "prompt_tokens_details": {"cached_tokens": 32},
}


def _model(server: HTTPServer, **fields: Any) -> LocalChat:
    return LocalChat(
        base_url=server.url_for("/v1"),
        api_key=SecretStr("sk-test-key"),
        model="local",
        temperature=0.0,
        max_tokens=7,
        extra_body={"repeat_penalty": 1.1},
        **fields,
    )


def _completion(request: Request) -> Response:
    body = request.get_json()
    if body.get("stream"):
        events = [
            {"id": "c1", "model": "local", "choices": [{"delta": {"role": "assistant"}}]},
            {"id": "c1", "model": "local", "choices": [{"delta": {"content": "Hel"}}]},
            {"id": "c1", "model": "local", "choices": [{"delta": {"content": "lo"}}]},
            {"id": "c1", "model": "local", "choices": [{"delta": {}, "finish_reason": "stop"}]},
            {"id": "c1", "model": "local", "choices": [], "usage": USAGE},
        ]
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return Response(text, content_type="text/event-stream")
    reply = {
        "id": "c1",
        "model": "local",
        "choices": [
            {"message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }
    return Response(json.dumps(reply), content_type="application/json")


def test_a_call_sends_what_the_server_needs_and_reads_usage(httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        "/v1/chat/completions", method="POST", headers={"Authorization": "Bearer sk-test-key"}
    ).respond_with_handler(_completion)
    reply = _model(httpserver).invoke([SystemMessage("Be brief."), HumanMessage("Hi")], stop=["\n"])

    (request, _), *_ = httpserver.log
    body = request.get_json()
    assert body == {
        "model": "local",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "temperature": 0.0,
        "max_completion_tokens": 7,
        "repeat_penalty": 1.1,
        "stop": ["\n"],
    }
    assert reply.content == "Hello"
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.usage_metadata == {
        "input_tokens": 40,
        "output_tokens": 3,
        "total_tokens": 43,
        "input_token_details": {"cache_read": 32},
    }


def test_the_schema_goes_in_the_body_and_the_shared_model_is_unchanged(
    httpserver: HTTPServer,
) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_completion)
    model = _model(httpserver)
    options = _schema_options(model, {"type": "object"})
    model.invoke("Hi", **options)

    body = httpserver.log[0][0].get_json()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": {"type": "object"}},
    }
    assert body["repeat_penalty"] == 1.1
    assert model.extra_body == {"repeat_penalty": 1.1}


def test_streaming_yields_the_tokens_and_the_usage(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_completion)
    chunks = list(_model(httpserver).stream("Hi"))

    body = httpserver.log[0][0].get_json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [c.content for c in chunks if c.content] == ["Hel", "lo"]
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert whole.content == "Hello"
    assert whole.usage_metadata is not None
    assert whole.usage_metadata["input_token_details"] == {"cache_read": 32}


def test_the_async_paths_match_the_sync_ones(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_completion)
    model = _model(httpserver)

    async def both() -> tuple[Any, list[Any]]:
        reply = await model.ainvoke("Hi")
        chunks = [c async for c in model.astream("Hi")]
        return reply, chunks

    reply, chunks = asyncio.run(both())
    assert reply.content == "Hello"
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] == 3
    assert "".join(str(c.content) for c in chunks) == "Hello"


@pytest.mark.parametrize("stream", [False, True])
def test_an_error_status_carries_the_status_and_the_servers_message(
    httpserver: HTTPServer, stream: bool
) -> None:
    error = {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}}
    httpserver.expect_request("/v1/chat/completions").respond_with_json(error, status=401)
    model = _model(httpserver)
    with pytest.raises(LocalServerError) as info:
        if stream:
            list(model.stream("Hi"))
        else:
            model.invoke("Hi")
    assert info.value.status_code == 401
    assert str(info.value) == "HTTP 401: Invalid API Key"


def test_the_nodes_classify_its_errors_like_any_providers(httpserver: HTTPServer) -> None:
    """A 4xx is the request's fault (RequestRejected), not a flaky model to retry."""
    from rat_agent.agent.context import Context
    from rat_agent.agent.nodes import RatNodes

    httpserver.expect_request("/v1/chat/completions").respond_with_data("bad", status=400)
    nodes = RatNodes(llm=_model(httpserver))
    with pytest.raises(RequestRejected, match="HTTP 400"):
        nodes.ask(Context(), "draft", [HumanMessage("Hi")])
