"""`rat show` and `rat threads`: past runs, from their checkpoints."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rat_agent.cli.ask import memory_summary, print_answer
from rat_agent.cli.safe import console, escape
from rat_agent.errors import ConfigError

if TYPE_CHECKING:  # `rat --help` must not import LangChain or LangGraph
    from rat_agent.agent.state import Step


def add_commands(sub: Any) -> None:
    show = sub.add_parser("show", help="print a past run's steps and answer")
    show.add_argument("thread")
    show.add_argument("--json", action="store_true")
    show.add_argument("--history", action="store_true", help="list the run's checkpoints")

    sub.add_parser("threads", help="list past runs, newest first")


def show_command(thread: str, *, as_json: bool, history: bool = False) -> int:
    from rat_agent.persistence.checkpoints import checkpointer

    with checkpointer() as saver:
        return _show_with(saver, thread, as_json=as_json, history=history)


def _show_with(saver: Any, thread: str, *, as_json: bool, history: bool) -> int:
    from rat_agent.agent.graph import build_graph
    from rat_agent.persistence.checkpoints import unfinished
    from rat_agent.timetravel import checkpoints

    graph = build_graph(checkpointer=saver)
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    values = snapshot.values
    if not values:
        raise ConfigError(f"no run with thread id {thread!r}: see `rat threads`")
    steps: list[Step] = values.get("steps", [])
    pending = snapshot.next or tuple(task.name for task in snapshot.tasks)
    status = (
        "finished"
        if not unfinished(snapshot)
        else (
            f"unfinished: {len(steps)} of {len(values.get('drafts', []))} steps revised, "
            f"next {', '.join(pending)}"
        )
    )
    if history:
        marks = checkpoints(graph, thread)
        if as_json:
            print(json.dumps([vars(m) for m in marks], indent=2, default=str))
            return 0
        for mark in marks:
            print(
                f"{mark.created_at}  {mark.id}  steps revised: {mark.step}  "
                f"next: {', '.join(mark.next) or '(finished)'}"
            )
        return 0
    if as_json:
        print(
            json.dumps(
                {"thread": thread, "status": status, **values},
                indent=2,
                ensure_ascii=False,
                default=str,
            )
        )
        return 0
    out = console()
    out.print(f"[bold]{escape(values.get('question', ''))}[/bold]  [dim]{thread} · {status}[/dim]")
    if values.get("draft_from"):
        out.print(f"[dim]draft: {escape(values['draft_from'])}[/dim]")
    for n, step in enumerate(steps, 1):
        out.rule(f"STEP {n} · {step['status']}")
        out.print(f"[dim]draft[/dim]   {escape(step['draft'])}")
        out.print(f"[dim]query[/dim]   {escape(step['query'])}")
        out.print(f"[dim]sources[/dim] {escape(', '.join(s['title'] for s in step['sources']))}")
        if step.get("fact"):
            out.print(f"[dim]fact[/dim]    {escape(step.get('fact', ''))}")
        out.print(f"[dim]revised[/dim] {escape(step['revised'])}")
        if step.get("needs"):
            out.print(f"[dim]needs[/dim]   {escape(', '.join(step.get('needs', [])))}")
        if step["note"]:
            out.print(f"[dim]note[/dim]    {escape(step['note'])}")
    if values.get("answer"):
        out.rule("Answer")
        print_answer(out, values["answer"], steps, cite=True)
    if values.get("thoughts"):
        out.print(f"\n[dim]memory: {escape(memory_summary(values['thoughts']))}[/dim]")
        for note in values["thoughts"]:
            mark = note["id"][:8] if note["stored"] else note["reason"]
            out.print(f"[dim]- {escape(mark)}: {escape(note['text'] or '(no thought)')}[/dim]")
    return 0


def threads_command() -> int:
    from rat_agent.agent.graph import build_graph
    from rat_agent.persistence.checkpoints import checkpointer, thread_ids, unfinished

    with checkpointer() as saver:
        graph = build_graph(checkpointer=saver)
        threads = [
            (t, graph.get_state({"configurable": {"thread_id": t}})) for t in thread_ids(saver)
        ]
    out = console()
    for thread, snapshot in threads:
        state = "unfinished" if unfinished(snapshot) else "finished"
        question = escape(str(snapshot.values.get("question", ""))[:70])
        out.print(f"{thread}  [dim]{state:10}[/dim] {question}")
    return 0
