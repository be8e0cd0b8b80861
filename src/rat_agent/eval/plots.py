"""PNG plots of an evaluation: the score by method, and what each method costs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rat_agent.eval.runner import Result, by_method, mean_stats, pass_at_1


def plot(
    results: Sequence[Result], prefix: Path, title: str, score_name: str = "executable"
) -> list[Path]:
    """Write <prefix>-score.png and <prefix>-cost.png; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    methods = by_method(results)
    names = list(methods)
    scores = [100 * pass_at_1(rows) for rows in methods.values()]
    costs = [mean_stats(rows) for rows in methods.values()]

    fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
    labels, counted = score_labels(scores, [len(rows) for rows in methods.values()])
    bars = ax.bar(names, scores, color="#4C72B0")
    ax.bar_label(bars, labels=labels)
    ax.set_ylim(0, 105)
    ax.set_ylabel(f"{score_name} (%)")
    ax.set_title(f"{title}: {score_name}, {counted}")
    ax.tick_params(axis="x", labelrotation=20)
    score_png = prefix.with_name(prefix.name + "-score.png")
    fig.savefig(score_png, dpi=120)
    plt.close(fig)

    fig, (tokens, wall) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
    processed = [c["processed_prompt_tokens"] for c in costs]
    cached = [c["cached_prompt_tokens"] for c in costs]
    completion = [c["completion_tokens"] for c in costs]
    tokens.bar(names, processed, label="prompt, processed", color="#4C72B0")
    tokens.bar(names, cached, bottom=processed, label="prompt, from cache", color="#A1C9F4")
    tokens.bar(
        names,
        completion,
        bottom=[p + c for p, c in zip(processed, cached, strict=True)],
        label="completion",
        color="#DD8452",
    )
    tokens.set_ylabel("tokens per run (mean)")
    tokens.legend(fontsize="small")
    model = [c["model_seconds"] for c in costs]
    retrieval = [c["retrieval_seconds"] for c in costs]
    other = [
        max(0.0, c["wall_seconds"] - m - r) for c, m, r in zip(costs, model, retrieval, strict=True)
    ]
    wall.bar(names, model, label="model", color="#4C72B0")
    wall.bar(names, retrieval, bottom=model, label="retrieval", color="#55A868")
    wall.bar(
        names,
        other,
        bottom=[m + r for m, r in zip(model, retrieval, strict=True)],
        label="other",
        color="#C44E52",
    )
    wall.set_ylabel("seconds per run (mean)")
    wall.legend(fontsize="small")
    for ax in (tokens, wall):
        ax.tick_params(axis="x", labelrotation=20)
    fig.suptitle(f"{title}: cost by method")
    cost_png = prefix.with_name(prefix.name + "-cost.png")
    fig.savefig(cost_png, dpi=120)
    plt.close(fig)
    return [score_png, cost_png]


def score_labels(scores: Sequence[float], runs: Sequence[int]) -> tuple[list[str], str]:
    """Each bar's label and the title's count of runs. A partial report's methods may have
    done different numbers of runs; each bar then says of how many its share is."""
    if len(set(runs)) <= 1:
        return [f"{s:.0f}%" for s in scores], f"{runs[0] if runs else 0} runs per method"
    labels = [f"{s:.0f}% of {n}" for s, n in zip(scores, runs, strict=True)]
    return labels, "runs per method differ (partial)"
