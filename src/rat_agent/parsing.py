"""Turning model text into thought steps, and model replies into clean text.

Small local models format freely ("STEP 1:", "1.", bullets, headings, paragraphs, or one
block of prose) and wrap replies in thinking blocks, code fences and echoed labels. The
splitter is line-based so it can never lose text: every line lands in some step, only its
list marker is removed. Code is kept as written: a fenced code block is one opaque piece of
its step (a "# comment" in it is not a heading; its indentation and blank lines stay), and
indented lines keep their indentation relative to their step.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from rat_agent.errors import ConfigError
from rat_agent.terms import unsupported

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"^.*?</(?:think|thinking|reasoning)>\s*", re.DOTALL | re.IGNORECASE)
_FENCE_LINE = re.compile(r"^\s*```\s*([\w+-]*)\s*$")
_PROSE_TAGS = {"text", "txt", "markdown", "md", "plaintext", "plain"}
_CODE_HINT = re.compile(
    r"^(?:[ \t]{2,}\S|\s*(?:def|class|import|from|return|for|while|if|print)\b)", re.MULTILINE
)

STEP_MARKER = re.compile(
    r"^\s*(?:[*_]{1,2})?(?:#{1,6}\s*)?step\s*(\d+)\s*(?:[*_]{1,2})?\s*[:.)\-–—]?\s*(?:[*_]{1,2})?\s*",
    re.IGNORECASE,
)
NUMBER_MARKER = re.compile(r"^\s*(?:[*_]{1,2})?(\d{1,3})[.)]\s+")
BULLET_MARKER = re.compile(r"^\s*[-*•+]\s+")
HEADING_MARKER = re.compile(r"^\s*#{1,6}\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
LONG_PARAGRAPH = 400  # a single paragraph longer than this is split into sentences

# Echoed labels ("Revised step 3:", "Search query:"); a bare "STEP 3:" is a list marker
# and is left to the step splitter, which must see it to split a multi-step reply.
_LABEL = re.compile(
    r"^\s*(?:[*_#]+\s*)?"
    r"(?:(?:revised|final|corrected|updated|new|current)\s*step(?:\s*\d+)?(?:\s*\(revised\))?"
    r"|(?:final\s*|revised\s*)?(?:answer|query|search query|response|revision|output))"
    r"\s*(?:[*_]+)?\s*:\s*(?:[*_]+\s*)?",
    re.IGNORECASE,
)


def strip_thinking(text: str) -> str:
    """Drop reasoning blocks, including one whose opening tag the server already ate."""
    text = _THINK.sub("", text)
    if re.search(r"</(?:think|thinking|reasoning)>", text, re.IGNORECASE):
        text = _THINK_OPEN.sub("", text, count=1)
    return text


def strip_fences(text: str) -> str:
    """Remove the fences that wrap prose (a reply in ```text```), keeping code blocks whole."""
    return "\n".join(_unwrap(text.splitlines())[0])


def _unwrap(lines: list[str]) -> tuple[list[str], set[int]]:
    """The lines with prose fences dropped, and which of them belong to code blocks.

    Small models wrap whole plans in fences as often as they fence code; a block is code
    when its tag names a language, or, untagged, when it has no list markers and looks
    like code (indented lines, `def`, `return`...).
    """
    out: list[str] = []
    code: set[int] = set()
    i = 0
    while i < len(lines):
        fence = _FENCE_LINE.match(lines[i])
        if fence is None:
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if _FENCE_LINE.match(lines[j])), len(lines))
        body = lines[i + 1 : end]
        if _is_code(fence.group(1), body):
            block = lines[i : end + 1]  # fences included; an unclosed block runs to the end
            code.update(range(len(out), len(out) + len(block)))
            out.extend(block)
        else:
            out.extend(body)
        i = end + 1
    return out, code


def _is_code(tag: str, body: list[str]) -> bool:
    if tag:
        return tag.lower() not in _PROSE_TAGS
    if any(p.match(line) for line in body for p in (STEP_MARKER, NUMBER_MARKER, BULLET_MARKER)):
        return False
    return bool(_CODE_HINT.search("\n".join(body)))


def _marker(line: str) -> re.Pattern[str] | None:
    for pattern in (STEP_MARKER, NUMBER_MARKER, BULLET_MARKER, HEADING_MARKER):
        if pattern.match(line):
            return pattern
    return None


# "STEP 2:" inside a line that opens with "STEP 1:": a model that wrote its steps as one line
_INLINE_STEP = re.compile(r"\s+(?=STEP\s*\d+\s*:)")


def _one_step_a_line(lines: list[str]) -> list[str]:
    return [
        part
        for line in lines
        for part in (_INLINE_STEP.split(line) if STEP_MARKER.match(line) else [line])
    ]


def split_steps(text: str) -> list[str]:
    """Split a draft into thought steps; every non-blank line ends up in exactly one step."""
    lines, code = _unwrap(_one_step_a_line(strip_thinking(text).splitlines()))
    counts: dict[re.Pattern[str], int] = {}
    for n, line in enumerate(lines):
        pattern = None if n in code else _marker(line)
        if pattern is not None:
            counts[pattern] = counts.get(pattern, 0) + 1
    # The first kind (in order of strength) that occurs at least twice (a "STEP k:" label
    # is unambiguous: once is enough) delimits the steps; weaker markers inside a step (a
    # sub-list under "STEP 2:") stay part of that step.
    for pattern in (STEP_MARKER, NUMBER_MARKER, BULLET_MARKER, HEADING_MARKER):
        if counts.get(pattern, 0) >= (1 if pattern is STEP_MARKER else 2):
            return _split_on(lines, code, pattern)
    paragraphs = _paragraphs(lines, code)
    if len(paragraphs) >= 2:
        return paragraphs
    if paragraphs and len(paragraphs[0]) > LONG_PARAGRAPH and not code:
        return [s.strip() for s in _SENTENCE_END.split(paragraphs[0]) if s.strip()]
    return paragraphs


def _split_on(lines: list[str], code: set[int], pattern: re.Pattern[str]) -> list[str]:
    steps: list[tuple[str, list[str]]] = []  # (the marker line's text, the lines under it)
    preamble: list[str] = []
    for n, line in enumerate(lines):
        if n not in code and pattern.match(line):
            body = line if pattern is HEADING_MARKER else pattern.sub("", line, count=1)
            steps.append((unbold(body.strip()), []))
        else:
            (steps[-1][1] if steps else preamble).append(line if n in code else line.rstrip())
    if not steps:
        return []
    texts = [_join([head, *_block(rest)]) for head, rest in steps]
    if preamble:  # text before the first marker is kept, as part of step one
        texts[0] = _join([*_block(preamble), texts[0]])
    return [t for t in texts if t]


def _block(lines: list[str]) -> list[str]:
    """Lines under one marker, indented relative to each other."""
    return textwrap.dedent("\n".join(lines)).splitlines()


def _join(lines: list[str]) -> str:
    """Blank lines go, except inside code blocks, where they are part of the code."""
    kept: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE_LINE.match(line):
            fenced = not fenced
        if line.strip() or fenced:
            kept.append(line)
    return "\n".join(kept).strip()


def unbold(text: str) -> str:
    """Drop emphasis left dangling by the marker ("**Step 1:** Do x" gives "** Do x")."""
    return re.sub(r"^[*_]+\s*", "", text)


def _paragraphs(lines: list[str], code: set[int]) -> list[str]:
    """Blank-line separated blocks; a blank line inside a code block does not end one."""
    paragraphs: list[list[str]] = [[]]
    for n, line in enumerate(lines):
        if line.strip() or n in code:
            paragraphs[-1].append(line.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    texts = (_join(_block(p)) for p in paragraphs)
    return [t for t in texts if t]


LOOP_REPEATS = 3  # a step or block of steps said this many times back to back is a loop


def paragraphs(text: str, max_steps: int) -> list[str]:
    """An answer's blank-line separated blocks, verbatim (a blank line inside a code fence
    does not end one): joined by blank lines again, they give the answer back. Blocks past
    `max_steps` join the last one."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in strip_thinking(text).splitlines():
        if _FENCE_LINE.match(line) or line.lstrip().startswith("```"):
            fenced = not fenced
        if line.strip() or fenced:
            blocks[-1].append(line.rstrip())
        elif blocks[-1]:
            blocks.append([])
    found: list[str] = []
    for block in ("\n".join(b).strip("\n") for b in blocks if b):
        if found and not says_something(block):  # a rule or a lone mark: part of the last
            found[-1] += "\n\n" + block
        else:
            found.append(block)
    if len(found) <= max_steps:
        return found
    return [*found[: max_steps - 1], "\n\n".join(found[max_steps - 1 :])]


def drop_repeats(steps: list[str]) -> list[str]:
    """Collapse a model stuck in a loop: a step, or a block of up to 4 steps, repeated
    LOOP_REPEATS or more times back to back is kept once.

    Steps that recur apart are left alone: plans repeat themselves legitimately ("mine a
    log" for the table, again for the sticks).
    """
    kept = list(steps)
    keys = [normalize(step) for step in kept]
    start = 0
    while start < len(kept):
        for size in range(1, 5):
            block = keys[start : start + size]
            reps = 1
            while keys[start + reps * size : start + (reps + 1) * size] == block:
                reps += 1
            if len(block) == size and reps >= LOOP_REPEATS:
                del kept[start + size : start + reps * size]
                del keys[start + size : start + reps * size]
                break
        start += 1
    return kept


def merge_tail(steps: list[str], max_steps: int) -> list[str]:
    """Bound the loop without dropping text: steps past the limit join the last one."""
    if len(steps) <= max_steps:
        return steps
    return [*steps[: max_steps - 1], "\n".join(steps[max_steps - 1 :])]


def clean_reply(text: str) -> str:
    """A reply with thinking, fences and echoed labels ("Revised step 2:") removed."""
    text = strip_fences(strip_thinking(text)).strip()
    previous = None
    while previous != text:
        previous = text
        text = _LABEL.sub("", text, count=1).strip()
    return text


def clean_query(text: str) -> str:
    """First meaningful line of a reply, unquoted, as a search query."""
    for line in clean_reply(text).splitlines():
        line = _LABEL.sub("", BULLET_MARKER.sub("", line)).strip().strip("\"'`").strip()
        if says_something(line):
            return line[:300]
    return ""


def head(step: str) -> str:
    """A step's statement: its first line. The lines under it ("- Look around your
    inventory...") elaborate; as a search query or a similarity target they only blur it.
    A step that opens a code block is kept whole."""
    first = step.strip().split("\n", 1)[0].strip()
    return step.strip() if not says_something(first) or _FENCE_LINE.match(first) else first


def keeps(reply: str) -> bool:
    """Whether a revision says the step stands as drafted: KEEP alone, in any case."""
    return re.fullmatch(r"\W*keep\W*", strip_thinking(reply).strip(), re.IGNORECASE) is not None


class RevisionReply(NamedTuple):
    text: str | None  # None: the reply was empty or cut short
    changed: bool
    lacks: list[str]  # words the revision added that its closest document lacks (grounded)


def revision(
    reply: str, draft: str, number: int, shown: Callable[[], Sequence[str]] | None = None
) -> RevisionReply:
    """What a revision reply makes of step `number`: its text and whether it changed the
    draft. KEEP keeps the draft (a step that stands costs one word to say so, not the step
    written out again); a reply with nothing in it, or one the token limit cut short, gives
    None: the draft is kept, and the caller says why. With `shown` (the documents as the
    prompt showed them: a profile's `grounded` entry), a change stands only where the closest
    document has every word it adds (terms.unsupported); otherwise the draft stands and
    `lacks` names the words."""
    if keeps(reply):
        return RevisionReply(draft, False, [])
    # a step that is itself a list (an answer's paragraph) is revised as a list: the reply
    # is the step, not a whole plan to pick step `number` from
    text = clean_reply(reply) if _listed(draft) else pick_step(clean_reply(reply), number)
    if not says_something(text):
        return RevisionReply(None, False, [])
    if normalize(text) == normalize(draft):
        return RevisionReply(text, False, [])
    if shown is not None and (lacks := unsupported(draft, text, shown())):
        return RevisionReply(draft, False, lacks)
    return RevisionReply(text, True, [])


def _listed(step: str) -> bool:
    """Whether a step holds a list of its own: two or more numbered or bulleted lines."""
    lines = step.splitlines()
    return sum(bool(NUMBER_MARKER.match(x) or BULLET_MARKER.match(x)) for x in lines) >= 2


def says_something(text: str) -> bool:
    """Whether a reply says anything at all (at least a few letters or digits)."""
    return sum(ch.isalnum() for ch in text) >= 3


def pick_step(reply: str, number: int) -> str:
    """From a step-scope reply, the revised step itself.

    Small models often rewrite the whole plan when asked for one step; when the reply is
    a list of numbered steps that includes this one, keep that one.
    """
    numbered = [
        (int(m.group(1)), line)
        for line in reply.splitlines()
        if (m := STEP_MARKER.match(line) or NUMBER_MARKER.match(line))
    ]
    if len(numbered) >= 2:
        steps = split_steps(reply)
        numbers = [n for n, _ in numbered]
        if number in numbers and len(steps) == len(numbers):
            return steps[numbers.index(number)]
    steps = split_steps(reply)
    if len(steps) == 1:  # a lone "STEP 3: ..." echoes its label
        return unbold(STEP_MARKER.sub("", steps[0], count=1)).strip()
    return "\n".join(steps)


def normalize(text: str) -> str:
    """The words only, lower-cased: a revision that just reflows bullets changed nothing."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def format_steps(steps: list[str]) -> str:
    return "\n".join(f"STEP {n}: {text}" for n, text in enumerate(steps, 1))


class Numbered(NamedTuple):
    read: list[int]  # the numbers of the passages the draft and the answer were written from
    steps: list[list[int]]  # each kept step's
    sources: list[Any]  # every source once, in the order of its number


def number_sources(
    steps: Sequence[Mapping[str, Any]], passages: Sequence[Mapping[str, Any]] = ()
) -> Numbered:
    """Each step's sources as numbers into one list, deduplicated by URL (else title); the
    `passages` a draft and its answer were written from (drafts "sourced", "rag") first.

    Dropped steps are not part of the answer, so they neither count nor cite."""
    numbers: dict[str, int] = {}
    cited: list[Any] = []
    refs: list[list[int]] = []
    kept = [s["sources"] for s in steps if s["status"] != "dropped"]
    for sources in [list(passages), *kept]:
        mine = []
        for source in sources:
            key = source["source"] or source["title"]
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                cited.append(source)
            mine.append(numbers[key])
        refs.append(mine)
    return Numbered(refs[0], refs[1:], cited)


def cited(
    answer: str, steps: Sequence[Mapping[str, Any]], passages: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The answer as a reader gets it in text: its sources numbered after it (those it was
    written from with its draft, then each step's)."""
    read, refs, sources = number_sources(steps, passages)
    lines = [answer]
    if read:
        lines.append(f"Drafted and answered from {' '.join(f'[{i}]' for i in read)}")
    lines += [
        f"STEP {n} checked against {' '.join(f'[{i}]' for i in numbers)}"
        for n, numbers in enumerate(refs, 1)
        if numbers
    ]
    lines += [f"[{i}] {s['title']} ({s['source'] or s['title']})" for i, s in enumerate(sources, 1)]
    return "\n".join(lines)


_CONFIDENT = re.compile(
    r"^\W*confiden\w*\W*?(?:[:=-]\s*|\s+)(?P<value>1|0|yes|no|true|false)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_BARE = re.compile(r"^\W*(?P<value>1|0)\W*$")
_THOUGHT_LABEL = re.compile(r"^\W*thought\W*?[:=-]\s*", re.IGNORECASE)
_INLINE_THOUGHT = re.compile(r"thought\W*?[:=-]\s*(.*)$", re.IGNORECASE)
_YES = {"1", "yes", "true"}


def parse_thought(reply: str) -> tuple[str, str]:
    """A thought reply as (verdict, text); verdict is "confident", "not confident" or
    "unreadable".

    Fails closed: the confidence must open the reply, and a confident reply must carry a
    thought; anything else is unreadable and stores nothing.
    """
    lines = [line.strip() for line in strip_thinking(reply).strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("```")]
    if not lines:
        return "unreadable", ""
    match = _CONFIDENT.match(lines[0]) or _BARE.match(lines[0])
    if match is None:
        return "unreadable", ""
    if match.group("value").lower() not in _YES:
        return "not confident", ""
    # On the confidence line, only a labelled thought counts ("CONFIDENT: 1 (sure)" is not one).
    inline = _INLINE_THOUGHT.search(match.groupdict().get("rest") or "")
    rest = [inline.group(1) if inline else "", *lines[1:]]
    text = " ".join(_THOUGHT_LABEL.sub("", part).strip() for part in rest if part.strip())
    text = unbold(text).strip()
    if not says_something(text) or _CONFIDENT.match(text):
        return "unreadable", ""
    return "confident", text


def reviewed(reply: Any, max_steps: int) -> list[str] | None:
    """The edited draft from a review's resume value; None keeps the draft as it was."""
    if reply is None or reply is True:
        return None
    if isinstance(reply, dict):
        if reply.get("drafts") is None:
            return None
        reply = reply["drafts"]
    if isinstance(reply, str):
        steps = split_steps(reply)
    elif isinstance(reply, list) and all(isinstance(step, str) for step in reply):
        steps = [step.strip() for step in reply]
    else:
        raise ConfigError(
            "a review must give the steps as a list of strings or a text of "
            "'STEP k:' lines, or true to accept the draft"
        )
    steps = [step for step in steps if step]
    if not steps:
        raise ConfigError("the reviewed draft has no steps: keep at least one")
    return merge_tail(steps, max_steps)
