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

    threads = sub.add_parser("threads", help="list past runs, newest first, or delete one")
    actions = threads.add_subparsers(dest="action")
    actions.add_parser("list", help="list past runs (the default)")
    delete = actions.add_parser("delete", help="delete a run and all its checkpoints")
    delete.add_argument("thread")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")


QUESTION_SHOWN = 300  # `rat show` prints a long question's start, and says how long it is


def shown_question(question: str) -> str:
    if len(question) <= QUESTION_SHOWN:
        return question
    return f"{question[:QUESTION_SHOWN]}... ({len(question):,} characters; --json shows it all)"


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
    question = shown_question(str(values.get("question", "")))
    out.print(f"[bold]{escape(question)}[/bold]  [dim]{thread} · {status}[/dim]")
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
        print_answer(out, values["answer"], steps, cite=True, passages=values.get("passages") or [])
    if values.get("thoughts"):
        out.print(f"\n[dim]memory: {escape(memory_summary(values['thoughts']))}[/dim]")
        for note in values["thoughts"]:
            mark = note["id"][:8] if note["stored"] else note["reason"]
            out.print(f"[dim]- {escape(mark)}: {escape(note['text'] or '(no thought)')}[/dim]")
    return 0


def threads_command(args: Any = None) -> int:
    from rat_agent.agent.graph import build_graph
    from rat_agent.persistence.checkpoints import checkpointer, thread_ids, unfinished

    out = console()
    with checkpointer() as saver:
        if getattr(args, "action", None) == "delete":
            return _delete(saver, args.thread, args.yes)
        graph = build_graph(checkpointer=saver)
        threads = [
            (t, graph.get_state({"configurable": {"thread_id": t}})) for t in thread_ids(saver)
        ]
    if not threads:
        out.print("[dim]no runs yet: ask with `rat ask QUESTION`[/dim]")
    for thread, snapshot in threads:
        state = "unfinished" if unfinished(snapshot) else "finished"
        when = str(snapshot.created_at or "")[:16].replace("T", " ")
        model = str((snapshot.values.get("settings") or {}).get("model", ""))
        question = escape(str(snapshot.values.get("question", ""))[:70])
        out.print(f"{thread}  [dim]{when}  {state:10} {escape(model):12}[/dim] {question}")
    return 0


def _delete(saver: Any, thread: str, yes: bool) -> int:
    from rat_agent.cli.safe import confirm

    if saver.get_tuple({"configurable": {"thread_id": thread}}) is None:
        raise ConfigError(f"no run with thread id {thread!r}: see `rat threads`")
    if not yes and not confirm(
        f"delete run {thread!r} and all its checkpoints?",
        f"`rat threads delete {thread}` deletes the run: add --yes to confirm",
    ):
        console().print("nothing deleted")
        return 1
    saver.delete_thread(thread)
    console().print(f"deleted run {escape(thread)}")
    return 0
