"""`rat ask`: run a question (or resume, review or fork a run) and watch each step get
checked and revised."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, get_args

from rich.console import Console

from rat_agent import parsing, timing
from rat_agent.agent.context import CHOICES as KINDS
from rat_agent.agent.context import Context
from rat_agent.cli import on_interrupt, review
from rat_agent.cli.safe import console, escape
from rat_agent.errors import ConfigError
from rat_agent.text import shorten
from rat_agent.timing import once_cost

if TYPE_CHECKING:  # `rat --help` must not import LangChain or LangGraph
    from langchain_core.runnables import RunnableConfig

    from rat_agent.agent.state import InputState, Step

CONTEXT_FLAGS = {f.name: f for f in fields(Context)}
CHOICES = {name: get_args(kind) for name, kind in KINDS.items()}


def add_command(sub: Any) -> None:
    ask = sub.add_parser("ask", help="answer a question with RAT (or resume a run)")
    ask.add_argument("question", nargs="?", help="the task; omit it with --thread to resume")
    ask.add_argument("--thread", help="thread id: resumes that run if it did not finish")
    ask.add_argument("--json", action="store_true", help="print the result as JSON")
    ask.add_argument("--quiet", action="store_true", help="print only the final answer")
    ask.add_argument(
        "--verbose",
        action="store_true",
        help="print every step's draft, query, sources, quoted passage and revision as the "
        "run goes (by default one line a step)",
    )
    ask.add_argument(
        "--from-step",
        type=int,
        metavar="K",
        help="re-run --thread from step K, keeping steps 1..K-1 (time travel)",
    )
    ask.add_argument("--edit", metavar="TEXT", help="with --from-step: step K's new draft")
    ask.add_argument(
        "--steps",
        metavar="FILE",
        help="answer a run paused for review with these steps ('-': stdin)",
    )
    for name, f in CONTEXT_FLAGS.items():
        flag = "--" + name.replace("_", "-")
        help_text = f.metadata.get("description", "")
        if name in CHOICES:
            ask.add_argument(flag, choices=CHOICES[name], help=help_text)
        elif "bare" in f.metadata:  # `--memory` alone turns memory on in its usual place
            ask.add_argument(flag, nargs="?", const=f.metadata["bare"], help=help_text)
        elif isinstance(f.default, bool):
            ask.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            kind = type(f.default)
            ask.add_argument(flag, type=kind, help=help_text, metavar=kind.__name__.upper())


def _context(args: argparse.Namespace, saved: dict[str, Any]) -> Context:
    given = {name: getattr(args, name) for name in CONTEXT_FLAGS if getattr(args, name) is not None}
    return Context.restore({**saved, **given})


def question_of(args: argparse.Namespace) -> str:
    """The task. In `rat ask --memory "QUESTION"` argparse gives the question to --memory's
    optional value: with no question given, a value of words is the question, memory on."""
    question = (args.question or "").strip()
    if not (question or args.thread) and len((args.memory or "").split()) > 1:
        question, args.memory = args.memory.strip(), CONTEXT_FLAGS["memory"].metadata["bare"]
    return question


def ask_command(args: argparse.Namespace) -> int:
    with once_cost("imports"):  # the graph and checkpointer libraries (LangGraph, LangChain)
        import rat_agent.agent.graph  # noqa: F401
        from rat_agent.persistence.checkpoints import checkpointer

    with checkpointer() as saver:  # RAT_CHECKPOINT_URL, else SQLite in the data folder
        return _ask_with(args, saver)


def _ask_with(args: argparse.Namespace, saver: Any) -> int:
    from rat_agent.persistence import locks

    question = question_of(args)
    if not question and not args.thread:
        raise ConfigError("the question is empty")
    thread = args.thread or uuid.uuid4().hex[:12]
    with locks.running(saver, thread):  # a second process on this thread would pay twice
        return _run(args, saver, thread, question)


def _run(args: argparse.Namespace, saver: Any, thread: str, question: str) -> int:
    from langgraph.types import Command

    from rat_agent.agent.graph import build_graph
    from rat_agent.persistence.checkpoints import unfinished
    from rat_agent.providers import chat
    from rat_agent.providers.stats import RunStats
    from rat_agent.retrieval import check_retriever

    graph = build_graph(checkpointer=saver)
    on_interrupt(f"finished steps are saved; resume with `rat ask --thread {thread}`")
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
        if review.pending_review(snapshot) is not None:  # paused for review: answer it
            inputs = Command(resume=review.read_steps(args.steps) if args.steps else True)
    elif not question:
        raise ConfigError(f"thread {thread} has no unfinished run: give a question")
    if args.steps and not isinstance(inputs, Command):
        raise ConfigError("--steps answers a run paused for review: give its --thread")
    resuming = not isinstance(inputs, dict)  # a resume keeps the run's own settings
    context = _context(args, values.get("settings", {}) if resuming else {})
    check_retriever(context, build=context.retrieves())
    chat.check_model(context.model, temperature=context.temperature, max_tokens=context.max_tokens)

    out = console()
    show = not (args.json or args.quiet)
    if show:
        verb = "resuming" if resuming else "thread"
        out.print(
            f"[dim]{verb} {thread} · model {escape(context.model)} · retriever "
            f"{escape(context.retriever)} · k={context.k}[/dim]"
        )
    stats = RunStats()
    config["callbacks"] = [stats]
    while True:
        # durability="sync": a checkpoint is on disk before the next node starts, so a kill
        # at any moment loses at most the node in flight (the default writes in the background)
        for event in graph.stream(
            inputs, config, context=context, stream_mode="custom", durability="sync"
        ):
            if show and isinstance(event, dict):
                (_progress if args.verbose else _brief)(out, event)
        pending = review.pending_review(graph.get_state(config))
        if pending is None:
            break
        if not (show and sys.stdin.isatty()):
            if pending.get("error") and isinstance(inputs, Command):  # our answer was refused
                raise ConfigError(f"{pending['error']} (the run is still paused)")
            return _paused(thread, pending, as_json=args.json)
        if pending.get("error"):
            out.print(f"[red]{escape(pending['error'])}[/red]")
        answer = review.ask(out, pending, thread)
        if answer is review.STOP:
            return _paused(thread, pending, as_json=False)
        inputs = Command(resume=answer)
    final = graph.get_state(config).values
    summary = stats.summary()
    if args.json:
        print(
            json.dumps(
                {
                    "thread": thread,
                    "question": final["question"],
                    "answer": final["answer"],
                    "steps": final["steps"],
                    "passages": final.get("passages") or [],
                    "thoughts": final.get("thoughts", []),
                    "stats": summary,
                    # One-off costs of this process (seconds): interpreter start and the
                    # CLI's own imports before `main`, then imports, model server start or
                    # attach, embedder load, opening Qdrant.
                    "startup": timing.costs(),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    if show:
        out.rule("Answer")
    passages = final.get("passages") or []
    print_answer(out, final["answer"], final["steps"], cite=not args.quiet, passages=passages)
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
        print(
            json.dumps(
                {"thread": thread, "status": "paused_for_review", "drafts": review["drafts"]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    console(stderr=True).print(
        f"paused for review: accept with `rat ask --thread {thread}`, or edit with "
        f'`rat ask --thread {thread} --steps FILE` (one "STEP k: ..." line per step)'
    )
    return 0


# How each status reads in the one-line-a-step output.
STATUS = {
    "revised": "revised",
    "unchanged": "confirmed",
    "inserted": "inserted",
    "dropped": "dropped",
    "not_revised": "kept",
}
LINE_CHARS = 160


def _brief(out: Console, event: dict[str, Any]) -> None:
    """The default output: the draft's size, then one line per checked step with its status
    and its text as revised (`rat show THREAD` and --verbose give the rest)."""
    kind = event.get("event")
    if kind == "draft" and not event["reviewed"]:
        origin = f", {event['from']}" if event.get("from") else ""
        n = len(event["drafts"])
        out.print(f"[dim]draft: {n} step{'s' * (n != 1)}{escape(origin)}[/dim]")
    elif kind == "step":
        step = event["revision"]
        status = STATUS.get(step["status"], step["status"])
        text = step["draft"] if step["status"] == "dropped" else step["revised"]
        line = shorten(" ".join(text.split()), LINE_CHARS)
        colour = {"revised": "green", "inserted": "magenta", "dropped": "yellow"}.get(status)
        label = f"[{colour}]{status}[/{colour}]" if colour else f"[dim]{status}[/dim]"
        out.print(f"[bold]STEP {event['step']}[/bold] {label} {escape(line)}")


def _progress(out: Console, event: dict[str, Any]) -> None:
    """One event of the graph's custom stream as a line or two: the same events any UI
    gets (README, "From Python"), so the CLI shows nothing a UI could not."""
    kind = event.get("event")
    if kind == "draft":
        drafts = event["drafts"]
        out.rule(f"{'Reviewed draft' if event['reviewed'] else 'Draft'}: {len(drafts)} steps")
        if event.get("from"):
            out.print(f"[dim]{escape(event['from'])}[/dim]")
        for n, text in enumerate(drafts, 1):
            out.print(f"[bold]STEP {n}[/bold] {escape(text)}")
    elif kind == "query":
        out.rule(f"Step {event['step']} of {event['of']}")
        out.print(f"[dim]draft[/dim] {escape(event['draft'])}")
        out.print(f"[cyan]query[/cyan] {escape(event['query'])}")
    elif kind == "sources":
        titles = ", ".join(event["titles"])
        if event["error"]:
            out.print(f"[yellow]{escape(event['error'])}[/yellow]")
        if titles or not event["error"]:
            out.print(f"[cyan]sources[/cyan] {escape(titles) or '(none)'}")
    elif kind == "insert":  # plan repair
        where = (
            f"inserted before: {event['needed_by']}"
            if event["needed_by"]
            else f"appended: {event.get('reason', '')}"
        )
        out.print(
            f"[magenta]needs[/magenta] {escape('; '.join(event['drafts']))} "
            f"[magenta]({escape(where)})[/magenta]"
        )
    elif kind == "step":
        _print_step(out, event["revision"], event["step"])
    elif kind == "answer":
        out.print("[dim]final answer written[/dim]")
    elif kind == "memory":
        out.print(f"[dim]memory: {escape(memory_summary(event['thoughts']))}[/dim]")


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
        out.print(
            f"{label} {escape(step['revised'])} [magenta](inserted: "
            f"{escape(step['note'])})[/magenta]"
        )
    elif step["status"] == "dropped":
        out.print(
            f"{label} [strike]{escape(step['draft'])}[/strike] "
            f"[yellow](dropped: {escape(step['note'])})[/yellow]"
        )
    else:
        out.print(
            f"{label} {escape(step['revised'])} [yellow](kept: {escape(step['note'])})[/yellow]"
        )


def memory_summary(notes: list[dict[str, Any]]) -> str:
    """ "2 thoughts stored, 1 redundant, 1 not confident": what a run taught the memory."""
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


def print_answer(
    out: Console,
    answer: str,
    steps: list[Step],
    *,
    cite: bool,
    passages: Sequence[dict[str, str]] = (),
) -> None:
    """The answer, then what it was written from (a sourced draft's passages) and each
    step's sources, as numbers into one deduplicated list."""
    out.print(escape(answer))
    if not cite:
        return
    read, refs, cited = parsing.number_sources(steps, passages)
    if read:
        out.print(f"[dim]drafted and answered from: {' '.join(f'[{i}]' for i in read)}[/dim]")
    for n, numbers in enumerate(refs, 1):
        if numbers:
            out.print(f"[dim]STEP {n} sources: {' '.join(f'[{i}]' for i in numbers)}[/dim]")
    if cited:
        out.print("\n[bold]Sources[/bold]")
        for i, src in enumerate(cited, 1):
            out.print(escape(f"[{i}] {src['title']} — {src['source']}"))
