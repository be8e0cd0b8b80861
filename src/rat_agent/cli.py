"""`rat`: ask a question and watch each thought step get checked and revised.

Every run is checkpointed to SQLite, so `rat ask --thread ID` resumes a killed run from its
last finished node and `rat show ID` prints a past run. Errors are one line on stderr and
a non-zero exit code; set RAT_DEBUG=1 for a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, NoReturn, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from rich.console import Console
from rich.markup import escape

from rat_agent import cli_review, parsing
from rat_agent.cli_eval import add_command as add_eval
from rat_agent.cli_eval import eval_command
from rat_agent.cli_ingest import add_commands, collections_command, ingest_command
from rat_agent.cli_memory import add_command as add_memory
from rat_agent.cli_memory import memory_command
from rat_agent.context import (
    Context,
    MemoryFrom,
    Method,
    MinecraftSource,
    Output,
    QueryMode,
    ReviseScope,
)
from rat_agent.errors import ConfigError, RatError
from rat_agent.state import InputState, Step

CONTEXT_FLAGS = {f.name: f for f in fields(Context)}
CHOICES = {
    "query_mode": get_args(QueryMode),
    "revise_scope": get_args(ReviseScope),
    "output": get_args(Output),
    "source": get_args(MinecraftSource),
    "method": get_args(Method),
    "memory_from": get_args(MemoryFrom),
}


class _Parser(argparse.ArgumentParser):
    """A bad flag is one line naming it and what it accepts, not the whole usage: `rat ask`
    has dozens of flags. Subcommands' parsers are of this class too (argparse's default)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rat",
        description="Retrieval Augmented Thoughts: draft a chain of thought, then check and "
        "revise every step against a knowledge source.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer a question with RAT (or resume a run)")
    ask.add_argument("question", nargs="?", help="the task; omit it with --thread to resume")
    ask.add_argument("--thread", help="thread id: resumes that run if it did not finish")
    ask.add_argument("--json", action="store_true", help="print the result as JSON")
    ask.add_argument("--quiet", action="store_true", help="print only the final answer")
    ask.add_argument("--from-step", type=int, metavar="K",
                     help="re-run --thread from step K, keeping steps 1..K-1 (time travel)")
    ask.add_argument("--edit", metavar="TEXT", help="with --from-step: step K's new draft")
    ask.add_argument("--steps", metavar="FILE",
                     help="answer a run paused for review with these steps ('-': stdin)")
    for name, f in CONTEXT_FLAGS.items():
        flag = "--" + name.replace("_", "-")
        help_text = f.metadata.get("description", "")
        if name in CHOICES:
            ask.add_argument(flag, choices=CHOICES[name], help=help_text)
        elif isinstance(f.default, bool):
            ask.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            kind = type(f.default)
            ask.add_argument(flag, type=kind, help=help_text, metavar=kind.__name__.upper())

    show = sub.add_parser("show", help="print a past run's steps and answer")
    show.add_argument("thread")
    show.add_argument("--json", action="store_true")
    show.add_argument("--history", action="store_true", help="list the run's checkpoints")

    sub.add_parser("threads", help="list past runs, newest first")
    add_commands(sub)
    add_eval(sub)
    add_memory(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if args.command == "ask":
            return _ask(args)
        if args.command == "show":
            return _show(args.thread, as_json=args.json, history=args.history)
        if args.command == "ingest":
            return ingest_command(args)
        if args.command == "collections":
            return collections_command(args)
        if args.command == "eval":
            return eval_command(args)
        if args.command == "memory":
            return memory_command(args)
        return _threads()
    except RatError as exc:
        if os.environ.get("RAT_DEBUG"):
            raise
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("interrupted: finished steps are saved; resume with `rat ask --thread ID`")
        return 130
    except Exception as exc:  # never a traceback for users; RAT_DEBUG=1 shows one
        if os.environ.get("RAT_DEBUG"):
            raise
        err.print(f"[red]error:[/red] {type(exc).__name__}: {escape(str(exc))}")
        return 1


def _context(args: argparse.Namespace, saved: dict[str, Any]) -> Context:
    given = {name: getattr(args, name) for name in CONTEXT_FLAGS if getattr(args, name) is not None}
    return Context(**{**saved, **given})


def _ask(args: argparse.Namespace) -> int:
    from rat_agent.checkpoints import checkpointer

    with checkpointer() as saver:  # RAT_CHECKPOINT_URL, else SQLite in the data folder
        return _ask_with(args, saver)


def _ask_with(args: argparse.Namespace, saver: Any) -> int:
    from rat_agent.checkpoints import unfinished
    from rat_agent.graph import build_graph
    from rat_agent.retrievers import check_retriever
    from rat_agent.stats import RunStats

    question = (args.question or "").strip()
    if not question and not args.thread:
        raise ConfigError("the question is empty")
    graph = build_graph(checkpointer=saver)
    thread = args.thread or uuid.uuid4().hex[:12]
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    if args.from_step is not None:  # time travel: branch the thread before that step
        if not args.thread or question:
            raise ConfigError("--from-step re-runs a past run: give its --thread, no question")
        from rat_agent.timetravel import fork

        fork(graph, thread, args.from_step, args.edit)
    elif args.edit is not None:
        raise ConfigError("--edit goes with --from-step")
    snapshot = graph.get_state(config)
    values = snapshot.values or {}
    inputs: InputState | Command[Any] | None = {"question": question}
    if unfinished(snapshot):  # resume it (killed mid-node, or paused for review)
        if question and question != values.get("question"):
            raise ConfigError(
                f"thread {thread} has an unfinished run for another question: "
                "omit the question to resume it, or use a new --thread"
            )
        inputs = None
        if cli_review.pending_review(snapshot) is not None:  # paused for review: answer it
            inputs = Command(resume=cli_review.read_steps(args.steps) if args.steps else True)
    elif not question:
        raise ConfigError(f"thread {thread} has no unfinished run: give a question")
    if args.steps and not isinstance(inputs, Command):
        raise ConfigError("--steps answers a run paused for review: give its --thread")
    resuming = not isinstance(inputs, dict)  # a resume keeps the run's own settings
    context = _context(args, values.get("settings", {}) if resuming else {})
    check_retriever(context)

    out = Console(highlight=False, soft_wrap=True)
    show = not (args.json or args.quiet)
    if show:
        verb = "resuming" if resuming else "thread"
        out.print(f"[dim]{verb} {thread} · model {context.model} · retriever "
                  f"{context.retriever} · k={context.k}[/dim]")
    stats = RunStats()
    config["callbacks"] = [stats]
    drafts: list[str] = values.get("drafts", [])
    done = len(values.get("steps", []))
    while True:
        # durability="sync": a checkpoint is on disk before the next node starts, so a kill
        # at any moment loses at most the node in flight (the default writes in the background)
        for update in graph.stream(
            inputs, config, context=context, stream_mode="updates", durability="sync"
        ):
            for node, change in update.items():
                if show and isinstance(change, dict):
                    before = drafts
                    drafts = change.get("drafts", drafts)
                    done = len(change.get("steps", [None] * done))
                    _progress(out, node, change, drafts, done, len(drafts) - len(before))
        review = cli_review.pending_review(graph.get_state(config))
        if review is None:
            break
        if not (show and sys.stdin.isatty()):
            if review.get("error") and isinstance(inputs, Command):  # our answer was refused
                raise ConfigError(f"{review['error']} (the run is still paused)")
            return _paused(thread, review, as_json=args.json)
        if review.get("error"):
            out.print(f"[red]{escape(review['error'])}[/red]")
        answer = cli_review.ask(out, review, thread)
        if answer is cli_review.STOP:
            return _paused(thread, review, as_json=False)
        inputs = Command(resume=answer)
    final = graph.get_state(config).values
    summary = stats.summary()
    if args.json:
        print(json.dumps({"thread": thread, "question": final["question"],
                          "answer": final["answer"], "steps": final["steps"],
                          "thoughts": final.get("thoughts", []),
                          "stats": summary}, indent=2, ensure_ascii=False))
        return 0
    if show:
        out.rule("Answer")
    _print_answer(out, final["answer"], final["steps"], cite=not args.quiet)
    if show:
        out.print(
            f"\n[dim]{summary['model_calls']} model calls · {summary['prompt_tokens']} prompt "
            f"tokens ({summary['cached_prompt_tokens']} from cache) · "
            f"{summary['completion_tokens']} completion tokens · "
            f"{summary['wall_seconds']:.1f} s · thread {thread}[/dim]"
        )
    return 0


def _paused(thread: str, review: dict[str, Any], *, as_json: bool) -> int:
    """The run waits on its thread for the review; say how to answer it."""
    if as_json:
        print(json.dumps({"thread": thread, "status": "paused_for_review",
                          "drafts": review["drafts"]}, indent=2, ensure_ascii=False))
        return 0
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"paused for review: accept with `rat ask --thread {thread}`, or edit with "
        f"`rat ask --thread {thread} --steps FILE` (one \"STEP k: ...\" line per step)"
    )
    return 0


def _progress(
    out: Console, node: str, change: dict[str, Any], drafts: list[str], done: int,
    inserted: int = 0,
) -> None:
    """One node's update as a line or two; `done` counts the steps checked so far."""
    if node == "draft_cot":
        out.rule(f"Draft: {len(drafts)} steps")
        for n, text in enumerate(drafts, 1):
            out.print(f"[bold]STEP {n}[/bold] {escape(text)}")
    elif node == "review_draft":
        out.rule(f"Reviewed draft: {len(drafts)} steps")
        for n, text in enumerate(drafts, 1):
            out.print(f"[bold]STEP {n}[/bold] {escape(text)}")
    elif node == "to_query":
        out.rule(f"Step {done + 1} of {len(drafts)}")
        out.print(f"[dim]draft[/dim] {escape(drafts[done])}")
        out.print(f"[cyan]query[/cyan] {escape(change['query'])}")
    elif node == "retrieve":
        titles = ", ".join(d["title"] for d in change.get("documents", []))
        if change.get("retrieval_error"):
            out.print(f"[yellow]{escape(change['retrieval_error'])}[/yellow]")
        if titles or not change.get("retrieval_error"):
            out.print(f"[cyan]sources[/cyan] {escape(titles) or '(none)'}")
    elif node == "revise_step" and "steps" not in change:  # plan repair
        added = drafts[done : done + inserted]
        out.print(f"[magenta]needs[/magenta] {escape('; '.join(added))} "
                  f"[magenta](inserted before: {escape(drafts[done + inserted])})[/magenta]")
    elif node == "revise_step":
        _print_step(out, change["steps"][-1], done)
    elif node == "write_answer":
        out.print("[dim]final answer written[/dim]")
    elif node == "remember":
        out.print(f"[dim]memory: {escape(memory_summary(change.get('thoughts', [])))}[/dim]")


def _print_step(out: Console, step: Step, number: int) -> None:
    """A checked step: what changed, and the passage it rests on."""
    label = f"[bold]STEP {number}[/bold]"
    if step.get("fact"):
        out.print(f"[dim]fact[/dim] {escape(step.get('fact', ''))}")
    if step["status"] == "revised":
        out.print(f"{label} {_diff(step['draft'], step['revised'])}")
    elif step["status"] == "unchanged":
        out.print(f"{label} {escape(step['revised'])} [dim](confirmed)[/dim]")
    elif step["status"] == "inserted":
        out.print(f"{label} {escape(step['revised'])} [magenta](inserted: "
                  f"{escape(step['note'])})[/magenta]")
    elif step["status"] == "dropped":
        out.print(f"{label} [strike]{escape(step['draft'])}[/strike] "
                  f"[yellow](dropped: {escape(step['note'])})[/yellow]")
    else:
        out.print(f"{label} {escape(step['revised'])} "
                  f"[yellow](kept: {escape(step['note'])})[/yellow]")


def memory_summary(notes: list[dict[str, Any]]) -> str:
    """"2 thoughts stored, 1 redundant, 1 not confident": what a run taught the memory."""
    if not notes:
        return "no thoughts made (no step was checked against sources)"
    counts: dict[str, int] = {}
    for note in notes:
        reason = "stored" if note["stored"] else note["reason"].split(":", 1)[0]
        counts[reason] = counts.get(reason, 0) + 1
    stored = counts.pop("stored", 0)
    parts = [f"{stored} thought{'s' if stored != 1 else ''} stored"]
    return ", ".join(parts + [f"{n} {reason}" for reason, n in counts.items()])


def _diff(before: str, after: str) -> str:
    """Word-level change in wdiff style, [-removed-] and {+added+}: readable without colour."""
    # bullets ("-", "*") are layout, not words: a reflowed list shows no change
    a = [w for w in before.split() if any(c.isalnum() for c in w)]
    b = [w for w in after.split() if any(c.isalnum() for c in w)]
    parts: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b).get_opcodes():
        if op == "equal":
            parts.append(escape(" ".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(f"[red]{escape('[-' + ' '.join(a[i1:i2]) + '-]')}[/red]")
        if j2 > j1:
            parts.append(f"[green]{escape('{+' + ' '.join(b[j1:j2]) + '+}')}[/green]")
    return " ".join(parts)


def _print_answer(out: Console, answer: str, steps: list[Step], *, cite: bool) -> None:
    """The answer, then each step's sources as numbers into one deduplicated list."""
    out.print(escape(answer))
    if not cite:
        return
    refs, cited = parsing.number_sources(steps)
    for n, numbers in enumerate(refs, 1):
        if numbers:
            out.print(f"[dim]STEP {n} sources: {' '.join(f'[{i}]' for i in numbers)}[/dim]")
    if cited:
        out.print("\n[bold]Sources[/bold]")
        for i, src in enumerate(cited, 1):
            out.print(escape(f"[{i}] {src['title']} — {src['source']}"))


def _show(thread: str, *, as_json: bool, history: bool = False) -> int:
    from rat_agent.checkpoints import checkpointer

    with checkpointer() as saver:
        return _show_with(saver, thread, as_json=as_json, history=history)


def _show_with(saver: Any, thread: str, *, as_json: bool, history: bool) -> int:
    from rat_agent.checkpoints import unfinished
    from rat_agent.graph import build_graph
    from rat_agent.timetravel import checkpoints

    graph = build_graph(checkpointer=saver)
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    values = snapshot.values
    if not values:
        raise ConfigError(f"no run with thread id {thread!r}: see `rat threads`")
    steps: list[Step] = values.get("steps", [])
    pending = snapshot.next or tuple(task.name for task in snapshot.tasks)
    status = "finished" if not unfinished(snapshot) else (
        f"unfinished: {len(steps)} of {len(values.get('drafts', []))} steps revised, "
        f"next {', '.join(pending)}"
    )
    if history:
        marks = checkpoints(graph, thread)
        if as_json:
            print(json.dumps([vars(m) for m in marks], indent=2, default=str))
            return 0
        for mark in marks:
            print(f"{mark.created_at}  {mark.id}  steps revised: {mark.step}  "
                  f"next: {', '.join(mark.next) or '(finished)'}")
        return 0
    if as_json:
        print(json.dumps({"thread": thread, "status": status, **values}, indent=2,
                         ensure_ascii=False, default=str))
        return 0
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"[bold]{escape(values.get('question', ''))}[/bold]  [dim]{thread} · {status}[/dim]")
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
        _print_answer(out, values["answer"], steps, cite=True)
    if values.get("thoughts"):
        out.print(f"\n[dim]memory: {escape(memory_summary(values['thoughts']))}[/dim]")
        for note in values["thoughts"]:
            mark = note["id"][:8] if note["stored"] else note["reason"]
            out.print(f"[dim]- {escape(mark)}: {escape(note['text'] or '(no thought)')}[/dim]")
    return 0


def _threads() -> int:
    from rat_agent.checkpoints import checkpointer, thread_ids, unfinished
    from rat_agent.graph import build_graph

    with checkpointer() as saver:
        graph = build_graph(checkpointer=saver)
        threads = [(t, graph.get_state({"configurable": {"thread_id": t}}))
                   for t in thread_ids(saver)]
    out = Console(highlight=False, soft_wrap=True)
    for thread, snapshot in threads:
        state = "unfinished" if unfinished(snapshot) else "finished"
        question = escape(str(snapshot.values.get("question", ""))[:70])
        out.print(f"{thread}  [dim]{state:10}[/dim] {question}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
