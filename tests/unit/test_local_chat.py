"""The local chat model against a loopback server that answers as llama.cpp's does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import SecretStr
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rat_agent.errors import RequestRejected
from rat_agent.providers.call import constraint_options
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
        "cache_prompt": False,  # its first call: see the next test
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
    options = constraint_options(model, {"type": "object"})
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


def _two_node_graph(query: Callable[[], object], revise: Callable[[], object]) -> Any:
    """A graph of RAT's query node then its revision node, each making `query`'s or
    `revise`'s calls: the node names are what LocalChat pins slots by."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from rat_agent.agent.graph import REVISE_STEP, TO_QUERY

    class State(TypedDict):
        n: int

    def node(calls: Callable[[], object]) -> Callable[[State], State]:
        def run(state: State) -> State:
            calls()
            return state

        return run

    builder = StateGraph(State)
    builder.add_node(TO_QUERY, node(query))
    builder.add_node(REVISE_STEP, node(revise))
    builder.add_edge(START, TO_QUERY)
    builder.add_edge(TO_QUERY, REVISE_STEP)
    builder.add_edge(REVISE_STEP, END)
    return builder.compile(checkpointer=InMemorySaver())


def _slots_used(server: HTTPServer, slots: int, threads: list[str]) -> list[tuple[str, str, Any]]:
    """(thread, node, id_slot) of each call RAT's query and revision nodes make."""
    from rat_agent.agent.graph import REVISE_STEP, TO_QUERY

    model = _model(server, slots=slots)
    graph = _two_node_graph(lambda: model.invoke("Hi"), lambda: model.invoke("Hi"))
    before = len(server.log)
    for thread in threads:
        graph.invoke({"n": 0}, {"configurable": {"thread_id": thread}})
    bodies = [request.get_json() for request, _ in server.log[before:]]
    nodes = [TO_QUERY, REVISE_STEP] * len(threads)
    runs = [thread for thread in threads for _ in (1, 2)]
    return [(t, n, b.get("id_slot")) for t, n, b in zip(runs, nodes, bodies, strict=True)]


def test_query_and_revision_calls_keep_a_slot_each(httpserver: HTTPServer) -> None:
    """Their prompts share only the system message and the task: on one slot each would
    evict the other's cached prefix (the revision's instruction) at every step."""
    from rat_agent.agent.graph import REVISE_STEP, TO_QUERY

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_completion)
    assert all(slot is None for *_, slot in _slots_used(httpserver, 1, ["a"]))

    used = _slots_used(httpserver, 2, ["a", "b"])
    assert {(node, slot) for _, node, slot in used} == {(TO_QUERY, 1), (REVISE_STEP, 0)}

    # With more slots, each run (thread) keeps one pair: queries odd, the rest even.
    threads = [f"thread-{i}" for i in range(12)]
    used = _slots_used(httpserver, 4, threads)
    pairs: dict[str, set[int]] = {}
    for thread, node, slot in used:
        assert slot % 2 == (node == TO_QUERY)
        pairs.setdefault(thread, set()).add(slot // 2)
    assert all(len(pair) == 1 for pair in pairs.values())
    assert {pair for (pair,) in pairs.values()} == {0, 1}  # 12 threads use both pairs

    # An odd count: the last slot serves every call of the runs that get it; none is idle.
    used = _slots_used(httpserver, 3, threads)
    by_thread: dict[str, set[int]] = {}
    for thread, node, slot in used:
        assert slot == 2 or slot % 2 == (node == TO_QUERY)
        by_thread.setdefault(thread, set()).add(slot)
    assert {frozenset(s) for s in by_thread.values()} == {frozenset({0, 1}), frozenset({2})}

    # Outside a graph (an embedder's own call) it goes to the first slot of a pair; streams too.
    list(_model(httpserver, slots=2).stream("Hi"))
    assert httpserver.log[-1][0].get_json()["id_slot"] == 0


def test_a_runs_first_call_on_a_slot_does_not_reuse_another_runs_cache(
    httpserver: HTTPServer,
) -> None:
    """llama.cpp's logits differ with the batches a reused prefix was computed in, so a
    greedy plan depended on which task ran before it: a run's first call on each slot
    prefills its whole prompt, its later calls reuse their own prefix."""
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_completion)
    model = _model(httpserver, slots=2)

    def revise() -> object:
        model.invoke("revise")
        return model.invoke("revise again")

    graph = _two_node_graph(lambda: model.invoke("query"), revise)
    for thread in ("a", "b", "a"):
        graph.invoke({"n": 0}, {"configurable": {"thread_id": thread}})
    calls = [
        (body["id_slot"], body.get("cache_prompt", True))
        for body in (request.get_json() for request, _ in httpserver.log)
    ]
    fresh_run = [(1, False), (0, False), (0, True)]
    assert calls == fresh_run * 2 + [(1, True), (0, True), (0, True)]  # "a" again: its own


def _tool_reply(request: Request) -> Response:
    """llama.cpp's reply when the model calls a tool: OpenAI's shape, arguments as text."""
    body = request.get_json()
    calls = [
        {
            "id": "t1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "maxmemory"}'},
        },
        {"id": "t2", "type": "function", "function": {"name": "search", "arguments": "not json"}},
    ]
    if body.get("stream"):
        events = [
            {
                "id": "c1",
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    **calls[0],
                                    "function": {"name": "search", "arguments": '{"query": '},
                                }
                            ]
                        }
                    }
                ],
            },
            {
                "id": "c1",
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [{"index": 0, "function": {"arguments": '"maxmemory"}'}}]
                        }
                    }
                ],
            },
            {"id": "c1", "choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        ]
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return Response(text, content_type="text/event-stream")
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    reply = {
        "id": "c1",
        "model": "local",
        "choices": [{"message": message, "finish_reason": "tool_calls"}],
    }
    return Response(json.dumps(reply), content_type="application/json")


def test_bound_tools_go_in_the_body_and_the_calls_come_back(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(_tool_reply)

    def search(query: str) -> str:
        """Search the documents."""
        return query

    bound = _model(httpserver).bind_tools([search], tool_choice="auto")
    reply = bound.invoke("How do I cap memory?")

    body = httpserver.log[0][0].get_json()
    assert body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in body["tools"]] == ["search"]
    assert body["tools"][0]["function"]["parameters"]["required"] == ["query"]
    assert reply.tool_calls == [
        {"name": "search", "args": {"query": "maxmemory"}, "id": "t1", "type": "tool_call"}
    ]
    assert [(c["name"], c["args"]) for c in reply.invalid_tool_calls] == [("search", "not json")]

    chunks = list(bound.stream("How do I cap memory?"))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert whole.tool_calls == [
        {"name": "search", "args": {"query": "maxmemory"}, "id": "t1", "type": "tool_call"}
    ]
