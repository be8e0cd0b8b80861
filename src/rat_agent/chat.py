"""A run as a turn of a chat: its question from the chat's last message (or the `question`
input), the chat's earlier turns, and the answer as the chat's next message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from rat_agent import parsing
from rat_agent.errors import ConfigError
from rat_agent.limits import check_question

State = Mapping[str, Any]  # the graph's state (rat_agent.agent.state.State), as read here


def question_of(state: State) -> str:
    """The run's task: a chat client's last message if it is the user's (not yet answered),
    else the `question` input; an empty one is bad input, not a model error."""
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage):
        question = messages[-1].text.strip()
    else:
        question = (state.get("question") or "").strip()
    if not question:
        raise ConfigError("the question is empty")
    return check_question(question)


def new_turn(state: State, question: str) -> dict[str, Any]:
    """A `question` input as the chat's next message; none for a chat client's own."""
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], HumanMessage):
        return {}
    return {"messages": [HumanMessage(question)]}


def turns_of(state: State) -> list[tuple[str, str]]:
    """A chat's turns before its last question, as (who, text)."""
    earlier = (state.get("messages") or [])[:-1]
    names = {"human": "User", "ai": "Assistant"}
    return [(names[m.type], m.text) for m in earlier if m.type in names and m.text.strip()]


def reply(state: State) -> dict[str, Any]:
    """The answer as the chat's next message, its sources numbered after it (`sources`: the
    same, as data)."""
    steps, passages = state.get("steps", []), state.get("passages") or []
    sources = parsing.number_sources(steps, passages).sources
    text = parsing.cited(state.get("answer", ""), steps, passages)
    return {"messages": [AIMessage(text, additional_kwargs={"sources": sources})]}
