"""Crafting plan repair (repair="minecraft") through the graph, with a scripted model.

The passed-in retriever declares no domain, so each run names the extension; the goal
settings and min_support (the plug-in's Settings), which these tests are not about, are off
unless a test turns them on (the fake pages say nothing a similarity check would accept)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from typing import Any
from unittest.mock import patch

from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, wiki_docs
from langchain_core.messages import AIMessage, BaseMessage

from rat_agent import build_graph
from rat_agent.repair import Settings
from rat_minecraft import repair as crafting

QUESTION = "How do I make a chest?"
# What each step needs, as the documents would say: planks need logs, the table planks.
RECIPES = {
    "Craft a chest.": (
        "Craft 1 chest from 8 planks at a crafting table.",
        ["8 planks", "a crafting table"],
    ),
    "Get 8 planks.": ("Craft 8 planks from 2 logs.", ["2 logs"]),
    "Get 2 logs.": ("Chop 2 logs.", []),
    "Get a crafting table.": ("Craft 1 crafting table from 4 planks.", ["4 planks"]),
    "Get 4 planks.": ("Craft 4 planks from 1 log.", ["1 log"]),
    "Get 1 log.": ("Chop 1 log.", []),
}

PAGE1 = wiki_docs(1)[0].page_content


def grounded_model(draft: str, *, drop: str = "", own: bool = False) -> ScriptedModel:
    """Replies in labelled lines; a step it does not know is confirmed as it is."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return draft
        if kind == "query":
            return f"about: {current_step(messages)}"
        step = current_step(messages)
        if step == drop:
            return "FACT: 1a. nothing\nSTEP: DROP: the task does not need it\nNEEDS: none"
        for draft_text, (revised, needs) in RECIPES.items():
            if step in (draft_text, revised):
                # a model that lists what the step makes among what it needs
                made = draft_text.removeprefix("Get ").rstrip(".")
                extra = [made] if own and draft_text.startswith("Get ") else []
                used = ", ".join([*needs, *extra])
                return (
                    f"FACT: 1a. {revised} It takes {used or 'nothing'}.\nSTEP: {revised}\n"
                    f"NEEDS: {used or 'none'}"
                )
        return f"FACT: 1a. Page 1 says\nSTEP: {step}\nNEEDS: none"

    return ScriptedModel(respond=respond, calls=[])


REPAIR: dict[str, Any] = {"repair": "minecraft"}
QUIET = Settings(min_support=0.0, stop_at_goal=False, reach_goal=False)
SETTINGS = {f.name for f in fields(Settings)}


@contextmanager
def repairing(**settings: Any) -> Iterator[None]:
    """Crafting repair with QUIET's settings, changed by `settings`, for one block."""
    with patch.object(crafting.REPAIR, "settings", replace(QUIET, **settings)):
        yield


def run(model: ScriptedModel, **context: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    settings = {name: context.pop(name) for name in list(context) if name in SETTINGS}
    context = {**REPAIR, **context}
    graph = build_graph(llm=model, retriever=ListRetriever(documents=wiki_docs(2)))
    events: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    with repairing(**settings):
        for mode, chunk in graph.stream(
            {"question": QUESTION}, context=context, stream_mode=["custom", "values"]
        ):
            if mode == "custom":
                events.append(chunk)
            else:
                result = chunk
    return result, events


def test_prerequisites_are_inserted_checked_and_the_step_checked_again() -> None:
    result, events = run(grounded_model("STEP 1: Craft a chest."))
    revised = [s["revised"] for s in result["steps"]]
    assert revised == [
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",  # for the chest's 8 planks
        "Craft 1 crafting table from 4 planks.",  # the table uses 4 of those 8 ...
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",  # ... so the chest asks again
        "Craft 1 chest from 8 planks at a crafting table.",
    ]
    statuses = [s["status"] for s in result["steps"]]
    assert statuses == ["inserted"] * 5 + ["revised"]
    assert (
        result["steps"][1]["note"] == "needed by: Craft 1 chest from 8 planks at a crafting table."
    )
    assert result["steps"][0]["makes"] == "2 logs"
    assert (
        result["answer"].splitlines()[-1]
        == "STEP 6: Craft 1 chest from 8 planks at a crafting table."
    )
    inserts = [e for e in events if e["event"] == "insert"]
    assert [e["drafts"] for e in inserts] == [
        ["Get 8 planks.", "Get a crafting table."],
        ["Get 2 logs."],
        ["Get 8 planks."],
        ["Get 2 logs."],
    ]
    assert [e["status"] for e in events if e["event"] == "step"] == statuses


def test_an_inserted_step_is_checked_causally() -> None:
    """Its query and revision see the task and its own draft, never the step waiting on it;
    it looks itself up (no query call). The waiting step is checked again after it, from its
    own revision (Settings.reuse, the default), or asked again (off)."""
    for reuse in (True, False):
        model = grounded_model("STEP 1: Craft a chest.")
        result, _ = run(model, reuse=reuse)
        checked = [
            (kind, current_step(m), prompt_text(m))
            for kind, m in model.calls
            if kind in ("query", "revise")
        ]
        for _, step, text in checked:
            assert QUESTION in text
            if step.startswith("Get "):
                assert "at a crafting table" not in text  # the chest, revised, waits after it
        queried = [step for kind, step, _ in checked if kind == "query"]
        revised = [step for kind, step, _ in checked if kind == "revise" and "chest" in step]
        chest = result["steps"][-1]
        assert chest["revised"] == "Craft 1 chest from 8 planks at a crafting table."
        assert chest["query"] == "about: Craft a chest."
        assert chest["fact"] and chest["sources"]
        if reuse:  # one query and one revision; checked again twice with no call
            assert queried == ["Craft a chest."]
            assert revised == ["Craft a chest."]
            continue
        # checked again, twice, looking up what it was for rather than its corrected text
        assert queried == ["Craft a chest."] * 3
        assert (
            revised == ["Craft a chest."] + ["Craft 1 chest from 8 planks at a crafting table."] * 2
        )


def test_repair_is_bounded_by_repair_steps() -> None:
    result, events = run(grounded_model("STEP 1: Craft a chest."), repair_steps=1)
    assert [s["status"] for s in result["steps"]] == ["inserted", "revised"]
    assert sum(1 for e in events if e["event"] == "insert") == 1
    off, _ = run(grounded_model("STEP 1: Craft a chest."), repair_steps=0)
    assert [s["revised"] for s in off["steps"]] == [
        "Craft 1 chest from 8 planks at a crafting table."
    ]


# A model that, asked for a furnace, writes the step before it: mining its cobblestone.
ONE_LEVEL_DOWN = {
    "Cook a meal.": (
        "Cooking: 1 Meat gives 1 Meal in a Furnace.",
        "Cook 1 meal from 1 meat in a furnace.",
        "1 meat, a furnace",
    ),
    "Get 1 meat.": ("Hunting: hunt a cow; it drops 1 Meat.", "Hunt 1 meat.", "none"),
    "Get a furnace.": (
        "Crafting: 8 Cobblestone gives 1 Furnace. Needs a Crafting Table.",
        "Mine 8 cobblestone with a pickaxe.",
        "a pickaxe",
    ),
    # checked again after its prerequisites, as repair rewrote it
    "Craft 1 furnace from 8 cobblestone in a crafting table.": (
        "Crafting: 8 Cobblestone gives 1 Furnace. Needs a Crafting Table.",
        "Craft 1 furnace from 8 cobblestone in a crafting table.",
        "8 cobblestone, a crafting table",
    ),
    "Get 8 cobblestone.": (
        "Mining: mine Stone with a pickaxe; it drops 1 Cobblestone.",
        "Mine 8 cobblestone.",
        "none",
    ),
    "Get a crafting table.": ("Found in villages: 1 Crafting Table.", "Find 1 crafting table.", ""),
}


def test_a_step_written_for_what_its_need_needs_makes_its_need() -> None:
    """ "Get a furnace." revised as the mining of its cobblestone becomes the furnace's
    recipe from its quote, and the mining is inserted before it as a prerequisite; kept as
    written, it would count as the furnace and no step would make one."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Cook a meal."
        if kind == "query":
            return current_step(messages)
        step = current_step(messages)
        fact, revised, needs = next(
            reply for draft, reply in ONE_LEVEL_DOWN.items() if step in (draft, reply[1])
        )
        return f"FACT: 1a. {fact}\nSTEP: {revised}\nNEEDS: {needs or 'none'}"

    result, _ = run(ScriptedModel(respond=respond, calls=[]))
    assert [s["revised"] for s in result["steps"]] == [
        "Hunt 1 meat.",
        "Mine 8 cobblestone.",
        "Find 1 crafting table.",
        "Craft 1 furnace from 8 cobblestone in a crafting table.",
        "Cook 1 meal from 1 meat in a furnace.",
    ]
    furnace = result["steps"][3]
    assert furnace["makes"] == "a furnace" and furnace["status"] == "inserted"
    assert furnace["needs"] == ["8 cobblestone", "a crafting table"]


def test_a_step_never_becomes_its_own_prerequisite() -> None:
    plain, _ = run(grounded_model("STEP 1: Craft a chest."))
    result, _ = run(grounded_model("STEP 1: Craft a chest.", own=True))
    assert [s["revised"] for s in result["steps"]] == [s["revised"] for s in plain["steps"]]


def test_a_dropped_step_is_marked_and_left_out_of_the_answer() -> None:
    model = grounded_model("STEP 1: Find a way out.\nSTEP 2: Get 2 logs.", drop="Find a way out.")
    result, events = run(model)
    first, second = result["steps"]
    assert second["revised"] == "Chop 2 logs."
    assert first["status"] == "dropped" and first["note"] == "the task does not need it"
    assert first["revised"] == ""
    assert result["answer"] == "STEP 1: Chop 2 logs."
    assert [e["status"] for e in events if e["event"] == "step"] == ["dropped", "revised"]


def test_only_needs_the_quoted_passage_names_become_steps() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Craft a chest."
        if kind == "query":
            return "chest"
        if current_step(messages) == "Craft a chest.":
            return (
                "FACT: 1a. 8 planks give 1 chest.\nSTEP: Craft 1 chest from 8 planks.\n"
                "NEEDS: 8 planks, a magic compass"
            )
        return "FACT: 1a. x\nSTEP: Chop 2 logs.\nNEEDS: none"

    result, _ = run(ScriptedModel(respond=respond, calls=[]))
    assert [s["draft"] for s in result["steps"]] == ["Get 8 planks.", "Craft a chest."]


def test_a_plan_ends_at_the_step_that_says_to_make_the_goal() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return (
                "STEP 1: Chop wood.\nSTEP 2: Put the wood in a chest.\n"
                "STEP 3: Craft a chest.\nSTEP 4: Open the chest."
            )
        if kind == "goal":
            return "Wooden chest"  # not named in a row by any step: nothing is dropped
        return f"STEP: {current_step(messages)}\nNEEDS: none"

    result, _ = run(ScriptedModel(respond=respond, calls=[]), query_prompt="", stop_at_goal=True)
    assert [s["status"] for s in result["steps"]] == ["unchanged"] * 4

    def named(kind: str, messages: list[BaseMessage]) -> str:
        return "a chest" if kind == "goal" else respond(kind, messages)

    # "in a chest" names the chest as a place, not as what the step makes
    model = ScriptedModel(respond=named, calls=[])
    result, _ = run(model, query_prompt="", stop_at_goal=True)
    assert [s["status"] for s in result["steps"]] == ["unchanged"] * 3 + ["dropped"]

    def wrapped(kind: str, messages: list[BaseMessage]) -> str:  # as the 1.5B model says it
        return "Obtain a chest in survival mode." if kind == "goal" else respond(kind, messages)

    model = ScriptedModel(respond=wrapped, calls=[])
    result, _ = run(model, query_prompt="", stop_at_goal=True)
    assert result["goal"] == "a chest"
    assert [s["status"] for s in result["steps"]] == ["unchanged"] * 3 + ["dropped"]
    assert result["steps"][3]["note"] == "the task is done at draft step 3, which names 'a chest'"
    assert result["answer"] == (
        "STEP 1: Chop wood.\nSTEP 2: Put the wood in a chest.\nSTEP 3: Craft a chest."
    )
    assert [kind for kind, _ in model.calls] == ["draft", "goal", "revise", "revise", "revise"]


def test_a_plan_ends_at_the_revised_step_that_makes_the_goal() -> None:
    """No draft step names the goal, but a revision makes it: what follows is dropped
    unchecked (no query, no revision), and a step that only names it does not count."""
    revised = {
        "Chop wood.": "Craft 8 planks for the chest from 2 logs.",
        "Build the box.": "Craft 1 chest from 8 planks.",
    }

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return (
                "STEP 1: Chop wood.\nSTEP 2: Build the box.\n"
                "STEP 3: Make another box.\nSTEP 4: Open it."
            )
        if kind == "goal":
            return "Chest"
        step = current_step(messages)
        return f"STEP: {revised.get(step, step)}\nNEEDS: none"

    model = ScriptedModel(respond=respond, calls=[])
    result, _ = run(model, query_prompt="", stop_at_goal=True)
    assert [s["status"] for s in result["steps"]] == ["revised"] * 2 + ["dropped"] * 2
    assert result["steps"][3]["note"] == "the task is done at step 2, which makes 'Chest'"
    assert result["answer"] == (
        "STEP 1: Craft 8 planks for the chest from 2 logs.\nSTEP 2: Craft 1 chest from 8 planks."
    )
    assert [kind for kind, _ in model.calls] == ["draft", "goal", "revise", "revise"]

    # switched off, every step is checked
    result, _ = run(ScriptedModel(respond=respond, calls=[]), query_prompt="")
    assert [s["status"] for s in result["steps"]] == ["revised"] * 2 + ["unchanged"] * 2


def test_the_repair_revision_does_not_see_the_revised_past() -> None:
    """A small model shown earlier steps copies them instead of the line it quotes."""
    model = grounded_model("STEP 1: Get 2 logs.\nSTEP 2: Get 1 log.")
    run(model)
    grounded = [prompt_text(m) for kind, m in model.calls if kind == "revise"]
    assert "Chop 2 logs." not in grounded[1]


def test_json_replies_are_asked_for_with_the_quotable_lines() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Get 2 logs."
        return json.dumps({"fact": f"1a. {PAGE1}", "step": "Chop 2 logs.", "needs": []})

    # the model's profile says its server enforces a schema (providers/profiles.py)
    model = ScriptedModel(respond=respond)
    with patch("rat_agent.agent.nodes.RatNodes.constrained", return_value=True):
        result, _ = run(model)
    assert result["steps"][0]["revised"] == "Chop 2 logs."
    assert result["steps"][0]["fact"] == PAGE1
    (sent,) = [o["response_format"] for o in model.options if "response_format" in o]
    schema = sent["json_schema"]["schema"]
    # the one passage that matches the step best (crafting's FACT_CHOICES), as labelled
    (line,) = schema["properties"]["fact"]["enum"]
    assert line.startswith(("1a. Page 1 says", "2a. Page 2 says"))
    assert schema["required"] == ["fact", "step", "needs"]
    # a model given in code has no profile: plain text
    plain = ScriptedModel(respond=respond)
    run(plain)
    assert not any("response_format" in o for o in plain.options)


def test_a_server_that_prefills_is_sent_the_quote_as_the_replys_start() -> None:
    """With one line to quote, the reply is begun with it and the model writes the rest
    under a grammar; the step and its quote come out as from a whole reply."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Get 2 logs."
        return ' "Chop 2 logs.",\n  "needs": ["an axe"]\n}'  # the rest only

    with (
        patch("rat_agent.agent.nodes.RatNodes.constrained", return_value=True),
        patch("rat_agent.agent.nodes.RatNodes.prefills", return_value=True),
    ):
        result, _ = run(model := ScriptedModel(respond=respond))
    step = result["steps"][0]
    assert (step["revised"], step["needs"]) == ("Chop 2 logs.", ["an axe"])
    (revise,) = [o for o in model.options if isinstance(o["last"], AIMessage)]
    assert "response_format" not in revise and "response_format" not in revise["extra_body"]
    begun = str(revise["last"].content)
    # the one passage that matches the step best, as labelled
    assert begun.startswith(('{\n  "fact": "1a. Page 1 says', '{\n  "fact": "2a. Page 2 says'))
    assert begun.endswith(f'{step["fact"]}",\n  "step":')
    assert revise["extra_body"]["grammar"].startswith("%llguidance")


def test_time_travel_to_a_step_after_a_repair() -> None:
    """Branching before step 3 keeps the inserted steps 1-2 and re-runs from there."""
    from langgraph.checkpoint.memory import InMemorySaver

    from rat_agent.timetravel import fork

    model = grounded_model("STEP 1: Craft a chest.")
    graph = build_graph(
        checkpointer=InMemorySaver(), llm=model, retriever=ListRetriever(documents=wiki_docs(2))
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    with repairing():
        first = graph.invoke({"question": QUESTION}, config, context=REPAIR)
        calls = len(model.calls)
        branch = fork(graph, "t", 3, "Get 4 planks.")
        second = graph.invoke(None, branch, context=REPAIR)
    assert second["steps"][:2] == first["steps"][:2]
    # the edited step needs a log the first two steps used up: repaired in the branch too
    assert [s["draft"] for s in second["steps"][2:4]] == ["Get 1 log.", "Get 4 planks."]
    assert second["steps"][3]["revised"] == "Craft 4 planks from 1 log."
    assert second["steps"][-1]["revised"] == first["steps"][-1]["revised"]
    redone = [current_step(m) for _, m in model.calls[calls:]]
    assert "Get 2 logs." not in redone and redone[0] == "Get 4 planks."


def test_a_pending_sibling_is_no_loop() -> None:
    """The torch needs coal and a stick; the coal needs a pickaxe, which needs 2 sticks of
    its own: the stick inserted for the torch is a sibling, not a step waiting on it."""
    recipes = {
        "Make a torch.": ("Craft 4 torches from 1 coal and 1 stick.", ["1 coal", "1 stick"]),
        "Get 1 coal.": ("Mine 1 coal with a pickaxe.", ["a pickaxe"]),
        "Get a pickaxe.": ("Craft 1 pickaxe from 2 sticks.", ["2 sticks"]),
    }

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Make a torch."
        step = current_step(messages)
        for draft, (revised, needs) in recipes.items():
            if step in (draft, revised):
                return f"FACT: 1a. {revised}\nSTEP: {revised}\nNEEDS: {', '.join(needs)}"
        return f"FACT: 1a. {step}\nSTEP: {step}\nNEEDS: none"

    result, _ = run(ScriptedModel(respond=respond, calls=[]), query_prompt="")
    assert [s["draft"] for s in result["steps"]] == [
        "Get 2 sticks.",
        "Get a pickaxe.",
        "Get 1 coal.",
        "Get 1 stick.",
        "Make a torch.",
    ]


def test_an_openai_compatible_model_gets_the_schema_in_its_request_body() -> None:
    """langchain-openai would parse a `response_format` reply and raise on one cut at
    max_tokens; in the body, the server still enforces it and the reply stays text."""
    from langchain_openai import ChatOpenAI

    from rat_agent.providers.call import constraint_options

    model = ChatOpenAI(
        model="m",
        api_key="not-used",
        base_url="http://127.0.0.1:9/v1",
        extra_body={"repeat_penalty": 1.1},
    )
    options = constraint_options(model, {"type": "object"})
    assert options == {
        "extra_body": {
            "repeat_penalty": 1.1,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": {"type": "object"}},
            },
        }
    }
    assert model.extra_body == {"repeat_penalty": 1.1}  # the shared model is left as it was
    assert constraint_options(model, None) == {}


def test_a_prerequisite_an_earlier_step_has_made_since_is_dropped_unchecked() -> None:
    """The shed needs a hammer and a forge; making the hammer needs the forge first, so by
    the time the shed's own "Get a forge." comes up, a forge exists."""
    recipes = {
        "Build a shed.": ("Build 1 shed with a hammer and a forge.", "a hammer, a forge"),
        "Get a hammer.": ("Forge 1 hammer in a forge.", "a forge"),
        "Get a forge.": ("Build 1 forge.", "none"),
    }

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Build a shed."
        step = current_step(messages)
        for draft, (revised, needs) in recipes.items():
            if step in (draft, revised):
                return f"FACT: 1a. {revised} It takes {needs}.\nSTEP: {revised}\nNEEDS: {needs}"
        raise AssertionError(step)

    model = ScriptedModel(respond=respond, calls=[])
    result, _ = run(model, query_prompt="")
    assert [(s["draft"], s["status"]) for s in result["steps"]] == [
        ("Get a forge.", "inserted"),
        ("Get a hammer.", "inserted"),
        ("Get a forge.", "dropped"),
        ("Build a shed.", "revised"),
    ]
    assert result["steps"][2]["note"] == "a forge: already made by an earlier step"
    assert result["answer"] == (
        "STEP 1: Build 1 forge.\nSTEP 2: Forge 1 hammer in a forge.\n"
        "STEP 3: Build 1 shed with a hammer and a forge."
    )
    revised = [current_step(m) for kind, m in model.calls if kind == "revise"]
    assert revised.count("Get a forge.") == 1  # the dropped one cost no call


def test_a_revision_that_makes_its_product_from_itself_takes_the_inputs_its_quote_counts() -> None:
    base = grounded_model("STEP 1: Get a crafting table.")
    fact = "1a. 1 Log (or Wood, Stripped Log) gives 4 Planks."

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        # the product copied where the quote's input belongs, at the first check and again
        # once the log is there
        if kind == "revise" and current_step(messages) in (
            "Get 4 planks.",
            "Craft 4 planks from 1 log.",
        ):
            return f"FACT: {fact}\nSTEP: Craft 4 planks from 4 planks.\nNEEDS: 4 planks"
        return base.respond(kind, messages)

    model = ScriptedModel(respond=respond, calls=[])
    result, _ = run(model, draft="cot", repair_steps=6)
    assert [s["revised"] for s in result["steps"]] == [
        "Chop 1 log.",
        "Craft 4 planks from 1 log.",
        "Craft 1 crafting table from 4 planks.",
    ]
    assert result["steps"][0]["makes"] == "1 log"  # the input read from the quote was made
    assert result["steps"][1]["note"].endswith(
        "made its product from itself (it was: 'Craft 4 planks from 4 planks.')"
    )
    # one revision per step (table, planks, log): the inputs are read by rule, and a step
    # checked again after its prerequisites is written from its own revision
    assert [kind for kind, _ in model.calls].count("revise") == 3


def test_what_the_step_uses_is_inserted_though_unlisted_and_its_tool_once() -> None:
    base = grounded_model("STEP 1: Craft a chest.")

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        # the needs leave out the planks the step uses, and count the table it works at
        if kind == "revise" and current_step(messages) == "Craft a chest.":
            return (
                "FACT: 1a. Chest: 8 Planks, at a Crafting Table.\n"
                "STEP: Craft 1 chest from 8 planks at a crafting table.\n"
                "NEEDS: 1 crafting table"
            )
        return base.respond(kind, messages)

    result, events = run(ScriptedModel(respond=respond, calls=[]), draft="cot", repair_steps=8)
    inserted = [e["drafts"] for e in events if e["event"] == "insert"]
    assert inserted[0] == ["Get 8 planks.", "Get a crafting table."]
    # the table takes 4 of the 8 planks made for the chest, so the chest asks for 8 more
    assert [s["revised"] for s in result["steps"]] == [
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",
        "Craft 1 crafting table from 4 planks.",
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",
        "Craft 1 chest from 8 planks at a crafting table.",
    ]


def goal_model(goal_revision: str = "") -> ScriptedModel:
    """A draft that stops short of the goal (a chest). The appended "Get a chest." is
    revised to `goal_revision` when given, else to the chest's recipe."""
    base = grounded_model("STEP 1: Find a forest.")
    chest, needs = RECIPES["Craft a chest."]

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "goal":
            return "a chest"
        if kind == "revise" and current_step(messages) == "Get a chest.":
            if goal_revision:
                return f"FACT: 1a. Page 1 says\nSTEP: {goal_revision}\nNEEDS: none"
            used = ", ".join(needs)
            return f"FACT: 1a. {chest} It takes {used}.\nSTEP: {chest}\nNEEDS: {used}"
        return base.respond(kind, messages)

    return ScriptedModel(respond=respond, calls=[])


def test_a_plan_that_ends_short_of_the_goal_gets_a_step_for_it() -> None:
    """reach_goal: after the last draft step, "Get a chest." is appended and repaired like
    an inserted step, so the chest's own prerequisites are inserted before it."""
    result, _ = run(goal_model(), query_prompt="")
    assert [s["revised"] for s in result["steps"]] == ["Find a forest."]  # off: as drafted

    model = goal_model()
    result, events = run(model, query_prompt="", reach_goal=True)
    assert result["goal"] == "a chest"
    steps = result["steps"]
    assert [s["revised"] for s in steps] == [
        "Find a forest.",
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",  # the chest's planks, before it
        "Craft 1 crafting table from 4 planks.",
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",
        "Craft 1 chest from 8 planks at a crafting table.",
    ]
    assert steps[-1]["status"] == "inserted" and steps[-1]["makes"] == "a chest"
    assert steps[-1]["note"] == "the plan ended before a step made 'a chest'"
    appended = [e for e in events if e["event"] == "insert" and not e["needed_by"]]
    assert appended == [
        {
            "event": "insert",
            "step": 2,
            "drafts": ["Get a chest."],
            "needed_by": "",
            "reason": "the plan ended before a step made 'a chest'",
        }
    ]
    # one goal call (no stop_at_goal here), and the appended step looks itself up
    assert [kind for kind, _ in model.calls].count("goal") == 1


def test_the_goal_step_is_appended_once_and_never_past_the_budget() -> None:
    model = goal_model(goal_revision="Admire the chest.")  # makes nothing, needs nothing
    result, events = run(model, query_prompt="", reach_goal=True)
    assert [s["revised"] for s in result["steps"]] == ["Find a forest.", "Admire the chest."]
    assert len([e for e in events if e["event"] == "insert"]) == 1

    result, events = run(goal_model(), query_prompt="", reach_goal=True, repair_steps=0)
    assert [s["revised"] for s in result["steps"]] == ["Find a forest."]
    assert not [e for e in events if e["event"] == "insert"]


def test_no_goal_step_is_appended_when_a_step_makes_the_goal() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        return "Chest" if kind == "goal" else base.respond(kind, messages)

    base = grounded_model("STEP 1: Craft a chest.")
    result, events = run(ScriptedModel(respond=respond, calls=[]), reach_goal=True)
    assert result["steps"][-1]["revised"] == "Craft 1 chest from 8 planks at a crafting table."
    assert all(e["needed_by"] for e in events if e["event"] == "insert")


def test_time_travel_to_the_step_appended_for_the_goal() -> None:
    """The checkpoint before the appended step holds its draft: a fork there edits it."""
    from langgraph.checkpoint.memory import InMemorySaver

    from rat_agent.timetravel import fork

    model = goal_model()
    graph = build_graph(
        checkpointer=InMemorySaver(), llm=model, retriever=ListRetriever(documents=wiki_docs(2))
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    context = {**REPAIR, "query_prompt": ""}
    with repairing(reach_goal=True):
        first = graph.invoke({"question": QUESTION}, config, context=context)
        assert len(first["steps"]) == 7
        calls = len(model.calls)
        second = graph.invoke(None, fork(graph, "t", 2, "Get a chest."), context=context)
    assert second["steps"] == first["steps"]  # the same step, checked again the same way
    assert current_step(model.calls[calls][1]) == "Get a chest."
    assert [kind for kind, _ in model.calls[calls:]].count("goal") == 0


def test_the_goal_step_is_not_taken_as_made_by_a_thing_whose_name_contains_the_goal() -> None:
    """Seen in a tune run: "Get Gold block." was dropped unchecked as made by "Mine 1 block
    of Gold Ore". The ledger lets a modifier pass ("planks" for "oak planks"); the goal's
    step is done only by a step that makes the goal as named, not an ender chest."""
    base = goal_model()

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Get an ender chest."
        if kind == "revise" and current_step(messages) == "Get an ender chest.":
            ender = "Craft 1 ender chest."
            return f"FACT: 1a. {ender}\nSTEP: {ender}\nNEEDS: none"
        return base.respond(kind, messages)

    result, _ = run(ScriptedModel(respond=respond, calls=[]), query_prompt="", reach_goal=True)
    assert result["steps"][0]["revised"] == "Craft 1 ender chest."
    assert result["steps"][-1]["revised"] == "Craft 1 chest from 8 planks at a crafting table."
    assert result["steps"][-1]["status"] == "inserted"


def test_a_prerequisite_asked_for_again_is_written_from_the_step_that_resolved_it() -> None:
    """Settings.reuse: the second "Get 8 planks." and "Get 2 logs." are copies of the first,
    with their quotes and sources, and neither retrieves nor asks the model."""
    model = grounded_model("STEP 1: Craft a chest.")
    result, events = run(model)  # on by default
    steps = result["steps"]
    assert [s["revised"] for s in steps] == [
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",
        "Craft 1 crafting table from 4 planks.",
        "Chop 2 logs.",
        "Craft 8 planks from 2 logs.",
        "Craft 1 chest from 8 planks at a crafting table.",
    ]
    asked = [current_step(m) for kind, m in model.calls if kind == "revise"]
    assert asked.count("Get 8 planks.") == 1
    assert asked.count("Get 2 logs.") == 1
    assert steps[3]["note"].endswith("written as step 1 was, from its quote")
    assert steps[4]["note"].endswith("written as step 2 was, from its quote")
    assert (steps[4]["fact"], steps[4]["sources"]) == (steps[1]["fact"], steps[1]["sources"])
    assert [s["status"] for s in steps] == ["inserted"] * 5 + ["revised"]
    titles = [e["titles"] for e in events if e["event"] == "sources"]
    assert titles[4] == [s["title"] for s in steps[1]["sources"]]
    # off, the model is asked each time
    again = grounded_model("STEP 1: Craft a chest.")
    run(again, reuse=False)
    assert [current_step(m) for kind, m in again.calls if kind == "revise"].count(
        "Get 8 planks."
    ) == 2


def test_a_reused_recipe_is_scaled_and_a_step_that_makes_too_few_is_asked_again() -> None:
    """ "Get 8 planks." after "Get 4 planks." runs the same recipe twice; "Chop 1 log." is
    no recipe to scale, so "Get 2 logs." goes to the model."""
    model = grounded_model("STEP 1: Get a crafting table.\nSTEP 2: Craft a chest.")
    result, _ = run(model, reuse=True)
    revised = [s["revised"] for s in result["steps"]]
    assert revised[:3] == [
        "Chop 1 log.",
        "Craft 4 planks from 1 log.",
        "Craft 1 crafting table from 4 planks.",
    ]
    assert revised[4] == "Craft 8 planks from 2 log."
    assert result["steps"][4]["note"].endswith("written as step 2 was, from its quote")
    asked = [current_step(m) for kind, m in model.calls if kind == "revise"]
    assert "Get 8 planks." not in asked
    assert "Get 2 log." in asked


def test_a_draft_step_resting_on_a_tool_its_sources_never_name_is_dropped() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Find iron ore.\nSTEP 2: Craft a chest."
        if kind == "revise" and current_step(messages) == "Find iron ore.":
            return (
                "FACT: 1a. Mining: mine Iron Ore with a Stone Pickaxe.\n"
                "STEP: Use a compass to find the ore.\nNEEDS: a compass"
            )
        return grounded_model("").respond(kind, messages)

    result, events = run(ScriptedModel(respond=respond, calls=[]), query_prompt="")
    first = result["steps"][0]
    assert first["status"] == "dropped" and first["revised"] == ""
    assert first["note"] == (
        "it needs a compass, which its sources do not name and no earlier step made "
        "(it was: 'Use a compass to find the ore.')"
    )
    assert "compass" not in result["answer"]
    assert not any(e["event"] == "insert" and "compass" in str(e["drafts"]) for e in events)
    assert result["steps"][-1]["revised"] == "Craft 1 chest from 8 planks at a crafting table."


def test_the_named_repairs_load_after_their_modules_from_many_threads_at_once() -> None:
    """A server's first runs load the extension together, after other code imported its
    module: each gets a working plan repair, by plug-in name or by import path."""
    from concurrent.futures import ThreadPoolExecutor

    import rat_agent.repair.general  # noqa: F401  (imported before, as by a plug-in)
    from rat_agent.agent import extension
    from rat_agent.agent.context import Context
    from rat_agent.repair import Repair

    extension.forget()
    with ThreadPoolExecutor(8) as pool:
        made = list(
            pool.map(
                lambda n: extension.repair_for(
                    Context(repair="minecraft" if n % 2 else "fakes:general_repair")
                ),
                range(16),
            )
        )
    assert all(isinstance(r, Repair) for r in made)
    assert {type(r.domain).__name__ for r in made if isinstance(r, Repair)} == {
        "Crafting",
        "General",
    }
