"""The one HTML cleaner (ingest, Tavily pages, wiki pages): readable text, in bounded time."""

from __future__ import annotations

import threading

from rat_agent.retrieval.web.passages import MAX_HTML_CHARS, html_to_text


def test_blocks_are_apart_and_a_rows_cells_on_one_line() -> None:
    html = (
        "<html><title>Diamond Pickaxe</title><body><nav>menu</nav><h2>Recipe</h2>"
        "<table><tr><th>In</th><th>Out</th></tr><tr><td>3 Diamond + 2 Stick</td>"
        "<td>Pickaxe</td></tr></table><!-- hidden --><p>Needs a <a href=x>Crafting "
        "Table</a>.</p><ul><li>one</li><li>two</li></ul>tail<br>end<script>x()</script>"
    )
    title, text = html_to_text(html)
    assert title == "Diamond Pickaxe"
    assert text.splitlines() == [
        "Recipe",
        "",
        "In | Out |",
        "",
        "3 Diamond + 2 Stick | Pickaxe |",
        "",
        "Needs a Crafting Table.",
        "",
        "one",
        "",
        "two",
        "",
        "tail",
        "",
        "end",
    ]


def _within(seconds: float, html: str) -> str | None:
    """The text, or None if cleaning did not finish in time (a generous hang guard: the
    page below took minutes when newlines were inserted into the tree)."""
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(html_to_text(html)[1]), daemon=True)
    worker.start()
    worker.join(seconds)
    return out[0] if out else None


def test_deeply_nested_markup_is_cleaned_in_linear_time() -> None:
    depth = 60_000  # 600 KB of nested divs
    html = "<html><body>" + "<div>x" * depth + "</div>" * depth + "</body></html>"
    text = _within(60, html)
    assert text is not None, "cleaning nested divs did not finish within 60 s"
    assert text.split() == ["x"] * depth


def test_only_the_first_max_html_chars_are_read() -> None:
    html = "<p>" + "a " * (MAX_HTML_CHARS // 2) + "</p><p>AFTER THE CAP</p>"
    text = _within(60, html)
    assert text is not None
    assert text.startswith("a a") and "AFTER THE CAP" not in text
