"""Does a chat model call a bound tool? The measurement behind method react on a model.

Run: `.venv/bin/python benchmarks/tool_calls.py [--model local]`. Writes
benchmarks/results/tool-calls-<model>.md: for each prompt (react's own, on three docs
questions, and one that only asks for the call) and each `tool_choice` (the default, and
"required"), whether the reply carried a tool call the server parsed, and whether its text
holds a call written some other way (a JSON object naming the tool).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import subprocess
import time
from pathlib import Path

from langchain_core.tools import StructuredTool

from rat_agent import Context
from rat_agent.agent import prompts
from rat_agent.eval.docs import cases
from rat_agent.providers.chat import get_chat_model

OUT = Path(__file__).parent / "results"
ASK = "Call the search tool with the query 'maxmemory'."


def search(query: str) -> str:
    """Never run: the probe reads the call, it does not answer it."""
    return "Nothing found."


def _named_in_text(text: str) -> bool:
    """A call the server did not parse: a JSON object naming the tool, in the text."""
    return bool(re.search(r'"name"\s*:\s*"search"', text))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="local")
    args = parser.parse_args()

    tool = StructuredTool.from_function(search, description=prompts.SEARCH_TOOL)
    model = get_chat_model(args.model)
    system = Context().system_prompt  # what method react shows the model
    questions = [case.question for case in cases("tune")[:3]]
    prompts_ = [("react's prompt, docs tune " + str(i + 1), q) for i, q in enumerate(questions)]
    prompts_.append(("asked only to call it", ASK))
    rows = []
    for choice in ("auto", "required"):
        bound = model.bind_tools([tool], tool_choice=None if choice == "auto" else choice)
        for name, question in prompts_:
            started = time.perf_counter()
            reply = bound.invoke(prompts.react_messages(system, question))
            seconds = time.perf_counter() - started
            rows.append((choice, name, len(reply.tool_calls), _named_in_text(reply.text), seconds))
            print(json.dumps(rows[-1]))
    table = "| tool_choice | prompt | tool calls parsed | a call written in the text | s |\n"
    table += "|---|---|---|---|---|\n" + "\n".join(
        f"| {c} | {n} | {k} | {'yes' if t else 'no'} | {s:.1f} |" for c, n, k, t, s in rows
    )
    parsed = sum(k > 0 for _, _, k, _, _ in rows)
    label = args.model.replace(":", "_").replace("/", "_")
    code = subprocess.run(
        ["git", "-C", str(OUT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    text = (
        f"# Tool calls, model {args.model}\n\nCommand: `.venv/bin/python "
        f"benchmarks/tool_calls.py --model {args.model}`  \nDate: {datetime.date.today()}  \n"
        f"Code: {code or 'unknown'} · machine: {platform.machine()}\n\n"
        f"{table}\n\n{parsed} of {len(rows)} replies carried a tool call.\n"
    )
    (OUT / f"tool-calls-{label}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
