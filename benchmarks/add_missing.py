"""Could one more model call add the settings rag's reply leaves out? Tune split only.

For each docs tune question: rag's answer from benchmarks/results/docs-tune-task-values.jsonl
and the question's passages as rag read them (top 3, 600 tokens). The bundled model is shown
both and asked for one setting from the passages that the answer still needs, quoting its
line, or NONE; the addition is appended and the keys scored before and after. Run from the
repository root: `python benchmarks/add_missing.py` (a minute or two a question on 2 cores).
Prints one line per question and the means. A probe, not a method: nothing in the graph
calls it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from langchain_core.messages import HumanMessage
from task_support import rag_parts

RAG_ANSWERS = Path(__file__).parent / "results" / "docs-tune-task-values.jsonl"
SCHEMA = {
    "type": "object",
    "properties": {"line": {"type": "string"}, "add": {"type": "string"}},
    "required": ["line", "add"],
}
INSTRUCTION = (
    "Above is an answer to the task. Does it leave out a setting or command from the "
    "documents that the task needs? If so, quote the line of the documents that gives it in "
    '"line", and in "add" write one sentence the answer should add: the setting as the '
    "documents write it, with the value the task asks for. If the answer already names "
    'everything the task needs, reply with "line" and "add" both "NONE".'
)


def main() -> None:
    from rat_agent.eval import docs
    from rat_agent.providers.call import ask
    from rat_agent.providers.chat import get_chat_model

    docs.ensure_collection()
    with RAG_ANSWERS.open() as lines:
        rag = {r["task"]: r for r in map(json.loads, lines) if r["method"] == "rag"}
    model = get_chat_model("local", max_tokens=160)
    before = after = 0.0
    cases = [c for c in docs.cases("tune") if c.key["task"] in rag]
    for case in cases:
        answer = rag[case.key["task"]]["answer"]
        system, text = rag_parts(docs.COLLECTION, case.question)
        messages = [system, HumanMessage(f"{text}Answer:\n{answer}\n\n{INSTRUCTION}")]
        start = time.time()
        reply = ask(model, "revise", messages, SCHEMA)
        try:
            proposed = json.loads(reply)
        except ValueError:
            proposed = {"line": "", "add": ""}
        add = str(proposed.get("add", ""))
        added = answer if add.strip().upper() in ("", "NONE") else f"{answer}\n\n{add}"
        old, new = docs.score(case, answer).score, docs.score(case, added).score
        quoted = bool(proposed.get("line")) and str(proposed["line"]) in text
        before, after = before + old, after + new
        print(
            f"{case.key['task']} {old:.2f} -> {new:.2f} quoted_in_docs={quoted} "
            f"{time.time() - start:.0f}s | ADD: {add[:140]!r} | keys {case.key['keys']}",
            flush=True,
        )
    print(f"mean before {before / len(cases):.2%} after {after / len(cases):.2%}")


if __name__ == "__main__":
    main()
