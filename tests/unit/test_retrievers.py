"""The retriever factory: names, import paths, and the settings that pick a source."""

from __future__ import annotations

import pytest
from fakes import SHARED_RETRIEVER, ListRetriever, plan_model

from rat_agent import ConfigError, cli, retrieval
from rat_agent.agent.context import Context
from rat_agent.agent.graph import build_graph
from rat_agent.providers import chat


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    retrieval.clear_cache()


def test_an_instance_is_loaded_by_import_path() -> None:
    assert retrieval.get_retriever(Context(retriever="fakes:SHARED_RETRIEVER")) is (
        SHARED_RETRIEVER
    )


def test_a_function_is_called_with_k() -> None:
    retriever = retrieval.get_retriever(Context(retriever="fakes:make_retriever", k=4))
    assert isinstance(retriever, ListRetriever) and len(retriever.documents) == 4


def test_an_imported_retriever_runs_in_the_graph() -> None:
    result = build_graph(llm=plan_model("STEP 1: one\nSTEP 2: two")).invoke(
        {"question": "q"}, context={"retriever": "fakes:make_retriever", "k": 2}
    )
    assert [s["sources"][0]["source"] for s in result["steps"]] == ["corpus:page1"] * 2


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module_xyz:thing", "cannot import 'no_such_module_xyz'"),
        ("fakes:missing", "has no attribute 'missing'"),
        ("fakes:NOT_A_RETRIEVER", "is a int, not a BaseRetriever"),
        ("fakes:make_nothing", "returned a str, not a BaseRetriever"),
        (":x", "package.module:attribute"),
        ("nosuchname", "unknown retriever 'nosuchname'"),
    ],
)
def test_bad_retrievers_are_one_clear_error(path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        retrieval.get_retriever(Context(retriever=path))


def test_the_cli_reports_a_bad_import_path_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = plan_model("STEP 1: x")
    monkeypatch.setattr(chat, "get_chat_model", lambda name, **kw: model)
    assert cli.main(["ask", "q", "--retriever", "nope_pkg.mod:retriever"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot import 'nope_pkg.mod'" in err
    assert model.calls == []  # checked before any model call


def test_boolean_settings_parse_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_REVIEW_DRAFT", "0")
    assert Context().review_draft is False
    monkeypatch.setenv("RAT_REVIEW_DRAFT", "yes")
    assert Context().review_draft is True
    monkeypatch.setenv("RAT_REVIEW_DRAFT", "maybe")
    with pytest.raises(ConfigError, match="RAT_REVIEW_DRAFT"):
        Context()
    monkeypatch.delenv("RAT_REVIEW_DRAFT")
    monkeypatch.setenv("RAT_MEMORY", "0")  # memory names a collection; as a switch, the usual
    assert Context().memory == ""
    monkeypatch.setenv("RAT_MEMORY", "yes")
    assert Context().memory == "thoughts"
    monkeypatch.setenv("RAT_MEMORY", "no/such")
    with pytest.raises(ConfigError, match="RAT_MEMORY"):
        Context()


def test_an_unknown_source_names_the_ones_there_are() -> None:
    # the built-in ones, then those installed plug-ins register
    with pytest.raises(
        ConfigError,
        match="qdrant, tavily, tavily-pages, searxng, searxng-pages, duckduckgo, "
        "duckduckgo-pages, minecraft, minecraft-auto",
    ):
        retrieval.check_retriever(Context(retriever="minecraft-web"))


def test_runs_with_different_settings_get_their_own_retriever() -> None:
    a = retrieval.get_retriever(Context(retriever="fakes:make_retriever", k=1))
    b = retrieval.get_retriever(Context(retriever="fakes:make_retriever", k=2))
    c = retrieval.get_retriever(Context(retriever="fakes:make_retriever", k=1, max_steps=3))
    assert a is not b and a is c


def test_a_server_can_load_the_embedder_before_the_first_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RAT_PRELOAD_EMBEDDER=1 (what `rat ui` sets): the embedder loads in a thread of its
    own as the server starts; unset, nothing loads until a search needs it."""
    from rat_agent.providers import embeddings

    monkeypatch.setattr(embeddings, "_embeddings", None)
    monkeypatch.delenv("RAT_PRELOAD_EMBEDDER", raising=False)
    assert embeddings.preload_if_asked() is None and embeddings._embeddings is None
    monkeypatch.setenv("RAT_PRELOAD_EMBEDDER", "1")
    thread = embeddings.preload_if_asked()
    assert thread is not None
    thread.join(timeout=120)
    assert embeddings._embeddings is not None
    assert embeddings.get_embeddings() is embeddings._embeddings  # the one the searches use
