"""From a fetched page or a file to the passages a prompt shows: clean, cut, rank."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from bs4 import BeautifulSoup
from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from rat_agent.providers.embeddings import get_embeddings, model_path

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
    """(title, readable text) of an HTML page; `drop` adds CSS selectors of site chrome."""
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(list(_NOISE)):
        tag.decompose()
    for selector in drop:
        for tag in soup.select(selector):
            tag.decompose()
    if soup.title:
        soup.title.decompose()
    for tag in soup(list(_BLOCKS)):  # keep paragraphs apart; cells of a row on one line
        tag.insert_before("\n")
        tag.insert_after("\n")
    for cell in soup(["td", "th"]):
        cell.insert_after(" | ")
    lines = (_SPACES.sub(" ", line).strip() for line in soup.get_text().splitlines())
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    return title, text


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
