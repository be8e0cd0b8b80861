"""A revision stands only where it rests on its documents (the `grounded` profile entry,
issue 79), measured on the revision benchmark without running the model again: the guard
(rat_agent.terms.unsupported: every word a revision adds must be in the document sharing
the most words with the step) is a function of the draft, the reply and the documents, so
each case's paper revision (a results file of the paper's arm, made before the guard
existed) is judged with it as revise_step judges it, and scored again.

The rule was shaped on the 79 cases of the partial results committed at 651b2d3 (the tune
part, whose revisions were read); the rest were run and scored only after, and are
reported apart.

With `--floor F` (the `bearing_floor` profile entry) a third arm also keeps, without the
call, every step whose best passage matches it less than F (eval.revision.bearing: the
loop's own passage score, against the step alone, as a case has no query). F is read off
the tune part: the largest multiple of 0.05 below its lowest-scoring case whose documents
bear on the step.

    python benchmarks/revision_guard.py --paper benchmarks/results/revision-local.jsonl \\
        --floor 0.5 --out benchmarks/results/revision-local-grounded.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from rat_agent.agent.prompts import shown
from rat_agent.cli.eval import header
from rat_agent.eval.revision import bearing, load_cases, outcome, rate, source_of
from rat_agent.terms import unsupported

TUNE = "651b2d3:benchmarks/results/revision-local.jsonl"  # the cases read while it was written


def tune_cases() -> set[str]:
    shown = subprocess.run(["git", "show", TUNE], capture_output=True, text=True, check=True)
    return {json.loads(line)["task"] for line in shown.stdout.splitlines() if line.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paper", type=Path, required=True)
    parser.add_argument("--paper-method", default="rat revise_prompt=paper")
    parser.add_argument("--floor", type=float, default=0.0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.paper.read_text().splitlines() if line.strip()]
    answers = {r["task"]: r["answer"] for r in rows if r["method"] == args.paper_method}
    order = [c for c in load_cases() if c["id"] in answers]
    tune = tune_cases()
    parts = {
        "tune": [c for c in order if c["id"] in tune],
        "fresh": [c for c in order if c["id"] not in tune],
        "all": order,
    }
    arms = ["paper", "paper, grounded"] + (["paper, grounded, floor"] if args.floor else [])
    scores = {c["id"]: bearing(c) for c in order} if args.floor else {}
    lines = [
        "| cases | source | arm | fixed (wrong steps) | broken (right steps) | refused | "
        "not asked |",
        "|---|---|---|---|---|---|---|",
    ]
    for part, chosen in parts.items():
        sources = sorted({source_of(c["id"]) for c in chosen})
        for source in ["all", *sources] if part != "tune" else ["all"]:
            mine = [c for c in chosen if source == "all" or source_of(c["id"]) == source]
            if not mine:
                continue
            wrong = [c for c in mine if c["kind"] == "fix"]
            right = [c for c in mine if c["kind"] != "fix"]
            for arm in arms:
                refused = skipped = 0
                said = {}
                for c in mine:
                    text = answers[c["id"]]
                    if arm.endswith("floor") and scores[c["id"]] < args.floor:
                        text, skipped = c["step"], skipped + 1
                    elif arm != "paper" and unsupported(c["step"], text, shown(c["documents"])):
                        text, refused = c["step"], refused + 1
                    said[c["id"]] = outcome(c, text)
                fixed = sum(said[c["id"]] == "fixed" for c in wrong)
                broken = sum(said[c["id"]] == "broken" for c in right)
                lines.append(
                    f"| {part} | {source} | {arm} | {rate(fixed, len(wrong))} | "
                    f"{rate(broken, len(right))} | {refused}/{len(mine)} | "
                    f"{skipped}/{len(mine)} |"
                )
    report = (
        header(
            "A revision stands only where its documents give what it adds",
            f"python benchmarks/revision_guard.py --paper {args.paper}"
            + (f" --floor {args.floor:g}" if args.floor else ""),
        )
        + f"- cases: {len(order)} with the paper arm's revision; grounded: the same reply, "
        "kept as the step only where terms.unsupported finds no added word missing from the "
        "document closest to the step (else the draft stands: `refused`); 95% Wilson "
        "intervals. tune: the cases read while the rule was written (those of the results at "
        f"{TUNE.split(':')[0]}); fresh: the rest."
        + (
            f" floor: grounded, and a step whose best passage matches it less than "
            f"{args.floor:g} is kept without the call (`not asked`)."
            if args.floor
            else ""
        )
        + "\n\n"
        + "\n".join(lines)
        + "\n"
    )
    print(report)
    if args.out:
        Path(args.out).write_text(report)


if __name__ == "__main__":
    main()
