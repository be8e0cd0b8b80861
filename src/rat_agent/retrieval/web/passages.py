"""From a fetched page or a file to the passages a prompt shows: clean, cut, rank."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from bs4 import BeautifulSoup, CData, Tag
from bs4.element import NavigableString, PageElement
from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from rat_agent.providers.embeddings import get_embeddings, model_path

#: The most HTML one page may give the cleaner: well past any article (the fetcher's body cap
#: is 5 MB), and a bound on the time a hostile page can take.
MAX_HTML_CHARS = 1_000_000
CHARS_PER_TOKEN = 4  # English prose in MiniLM's word pieces, measured on the corpus: ~4.3
_NOISE = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "iframe",
    "button",
)
_BLOCKS = (
    "p",
    "div",
    "section",
    "article",
    "li",
    "tr",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dt",
    "dd",
)
_BLANKS = re.compile(r"\n\s*\n+")
_SPACES = re.compile(r"[ \t\u00a0]+")
_lock = threading.Lock()


def html_to_text(html: str, *, drop: Sequence[str] = ()) -> tuple[str, str]:
    """(title, readable text) of an HTML page; `drop` adds CSS selectors of site chrome.

    At most MAX_HTML_CHARS of the page are read, and the text is gathered in one walk of
    the tree, in time linear in the page (inserting newlines into the tree, as before, was
    quadratic in the nesting: 15 s for 172 KB of nested divs)."""
    soup = BeautifulSoup(html[:MAX_HTML_CHARS], "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(list(_NOISE)):
        tag.decompose()
    for selector in drop:
        for tag in soup.select(selector):
            tag.decompose()
    if soup.title:
        soup.title.decompose()
    lines = (_SPACES.sub(" ", line).strip() for line in _text(soup).splitlines())
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    return title, text


def _text(root: Tag) -> str:
    """The page's text, blocks apart, a table row's cells on one line (" | " after each);
    iterative, so deep nesting neither recurses nor re-walks the tree."""
    parts: list[str] = []
    stack: list[tuple[PageElement, str]] = [(root, "")]
    while stack:
        node, closing = stack.pop()
        if closing:
            parts.append(closing)
        elif isinstance(node, Tag):
            after = (" | " if node.name in ("td", "th") else "") + (
                "\n" if node.name in _BLOCKS else ""
            )
            if node.name in _BLOCKS:
                parts.append("\n")
            if after:
                stack.append((node, after))
            stack.extend((child, "") for child in reversed(node.contents))
        elif type(node) in (NavigableString, CData):  # as get_text: no comments, doctypes
            parts.append(str(node))
    return "".join(parts)


def tokens_for_chars(chars: int) -> int:
    """The tokens that fit the `chars` of a document a prompt shows."""
    return max(32, chars // CHARS_PER_TOKEN)


@cache
def _tokenizer() -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path()), local_files_only=True)
    tokenizer.model_max_length = 10**9  # we only count tokens; silence the "too long" warning
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens as the embedding model counts them (the chunk size is in these units)."""
    with _lock:  # fast tokenizers are not safe to share across threads mid-call
        return len(_tokenizer()(text, add_special_tokens=False)["input_ids"])


def split_text(
    text: str, *, tokens: int, overlap: int = 0, language: str | None = None
) -> list[str]:
    """Token-aware chunks of at most `tokens`; code splits on its own structure first.

    `language` is a langchain_text_splitters.Language value ("python", "markdown", ...).
    """
    separators = None
    if language is not None:
        separators = RecursiveCharacterTextSplitter.get_separators_for_language(Language(language))
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=tokens,
        chunk_overlap=min(overlap, tokens // 2),
        length_function=count_tokens,
        separators=separators,
        keep_separator=True,
        strip_whitespace=True,
    )
    return [chunk for chunk in splitter.split_text(text) if chunk.strip()]


def closest(query: str, texts: Sequence[str], k: int) -> list[int]:
    """Indices of the `k` texts nearest the query by embedding cosine, best first."""
    if not texts or k < 1:
        return []
    embeddings = get_embeddings()
    vectors = np.asarray(embeddings.embed_documents(list(texts)), dtype=np.float32)
    target = np.asarray(embeddings.embed_query(query), dtype=np.float32)
    scores = vectors @ target  # the embedder normalizes, so this is the cosine
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:k]]
