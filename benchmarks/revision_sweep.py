"""Revise only where the model is unsure of its step (iRAT's lever, issue 79), measured on
the revision benchmark without running the model again: each case's paper revision (from a
results file of the paper's arm) joined with the chance the model gave KEEP as the first
token of its verdict (from a results file of the `verdict-p` arm). At a threshold t, a case
is revised (the paper arm's outcome) where that chance is below t, and kept as drafted
otherwise; fixed, broken and the share of revisions made are reported at each t.

    python benchmarks/revision_sweep.py --paper benchmarks/results/revision-local.jsonl \\
        --unsure benchmarks/results/revision-local-unsure.jsonl \\
        --out benchmarks/results/revision-local-unsure.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rat_agent.cli.eval import header
from rat_agent.eval.revision import kind_of, rate

QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9)  # thresholds at these shares of the cases


def _rows(path: Path, method: str | None) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["task"]: r for r in rows if method is None or r["method"] == method}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paper", type=Path, required=True)
    parser.add_argument("--unsure", type=Path, required=True)
    parser.add_argument("--paper-method", default="rat revise_prompt=paper")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    paper = _rows(args.paper, args.paper_method)
    unsure = {t: r for t, r in _rows(args.unsure, None).items() if "p_keep" in r["stats"]}
    both = sorted(set(paper) & set(unsure))
    chance = {c: float(unsure[c]["stats"]["p_keep"]) for c in both}  # type: ignore[index, arg-type]
    ranked = sorted(chance.values())
    thresholds = [ranked[int(q * len(ranked))] for q in QUANTILES] + [1.01]
    wrong = [c for c in both if kind_of(c) == "fix"]
    right = [c for c in both if kind_of(c) != "fix"]
    # does the model doubt its wrong steps more than its right ones?
    doubt = sum(
        (chance[w] < chance[r]) + 0.5 * (chance[w] == chance[r]) for w in wrong for r in right
    ) / (len(wrong) * len(right))
    lines = [
        "| revise where P(KEEP) < | revised | fixed (wrong steps) | broken (right steps) |",
        "|---|---|---|---|",
    ]
    for t in thresholds:
        fixes = breaks = revised = 0
        for case in both:
            if chance[case] < t:
                revised += 1
                reason = paper[case]["reason"]
                fixes += reason == "fixed"
                breaks += reason == "broken"
        label = "always (the paper)" if t > 1 else f"{t:.3f}" if revised else f"{t:.3f} (never)"
        lines.append(
            f"| {label} | {revised}/{len(both)} | {rate(fixes, len(wrong))} | "
            f"{rate(breaks, len(right))} |"
        )
    report = (
        header(
            "Revise only where the model is unsure of its step",
            f"python benchmarks/revision_sweep.py --paper {args.paper} --unsure {args.unsure}",
        )
        + f"- the `verdict-p` arm: `rat eval --benchmark revision --model local "
        f"--tasks {len(both)} --set revise_prompt=verdict-p --label {args.unsure.stem}`\n"
        f"- cases: {len(both)}, the first of the benchmark's order that both arms ran; P(KEEP): "
        "the chance of the verdict's first token beginning KEEP (its top 10 tokens); "
        f"from {ranked[0]:.2f} to {ranked[-1]:.2f}, thresholds at its quantiles\n"
        f"- AUC: {doubt:.2f}, the chance the model is less sure of a wrong step than of a "
        "right one (0.5: its doubt tells nothing)\n\n" + "\n".join(lines) + "\n"
    )
    print(report)
    if args.out:
        Path(args.out).write_text(report)


if __name__ == "__main__":
    main()
