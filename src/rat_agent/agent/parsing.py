"""Turning model text into thought steps, and model replies into clean text.

Small local models format freely ("STEP 1:", "1.", bullets, headings, paragraphs, or one
block of prose) and wrap replies in thinking blocks, code fences and echoed labels. The
splitter is line-based so it can never lose text: every line lands in some step, only its
list marker is removed. Code is kept as written: a fenced code block is one opaque piece of
its step (a "# comment" in it is not a heading; its indentation and blank lines stay), and
indented lines keep their indentation relative to their step.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from rat_agent.agent.state import Source, Step
from rat_agent.terms import STOPWORDS, words

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


def split_steps(text: str) -> list[str]:
    """Split a draft into thought steps; every non-blank line ends up in exactly one step."""
    lines, code = _unwrap(strip_thinking(text).splitlines())
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
            steps.append((_unbold(body.strip()), []))
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


def _unbold(text: str) -> str:
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
        return _unbold(STEP_MARKER.sub("", steps[0], count=1)).strip()
    return "\n".join(steps)


def quotes(fact: str, lines: Sequence[str]) -> bool:
    """Whether a quoted fact is one of the lines shown, or a part of one (its words in a
    row, labels and punctuation aside): a quote the model wrote itself is no evidence."""
    said = normalize(_LABEL_OF_LINE.sub("", fact, count=1))
    return bool(said) and any(
        said in normalize(_LABEL_OF_LINE.sub("", line, count=1)) for line in lines
    )


def normalize(text: str) -> str:
    """The words only, lower-cased: a revision that just reflows bullets changed nothing."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


# Names a reader would copy: settings, functions, paths, versions ("tcp_keepalive",
# "/etc/redis.conf", "v2.1", "str.split"); and anything set in code marks.
_TOKEN = re.compile(r"[\w][\w./\\:-]*[\w]|\w")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_AMOUNT = re.compile(r"^\d+(?:[a-z]{1,3})?$")  # "2gb", "300", "10ms": amounts, said many ways
# CJK, kana and Hangul: a model trained on them may slip into them mid-sentence ("dropping新")
_SCRIPT_SWITCH = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def _specific(token: str) -> bool:
    if _AMOUNT.match(token):
        return False
    return any(ch in token for ch in "_/\\.:") or (
        any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)
    )


# Words that say nothing of what a line is about, besides the search's function words.
# fmt: off
_FILLER = frozenset([
    "will", "would", "can", "could", "should", "may", "might", "must", "shall", "this",
    "that", "these", "those", "then", "than", "also", "not", "no", "all", "any", "each",
    "every", "some", "such", "there", "their", "they", "them", "we", "our", "us", "was",
    "were", "been", "being", "has", "have", "had", "does", "did", "done", "if", "so", "but",
    "just", "only", "very", "more", "most", "other", "about", "after", "before", "use",
    "used", "using", "make", "sure", "need", "want", "one",
])
# fmt: on


def bears_on(fact: str, step: str, question: str, names: bool = True) -> bool:
    """Whether a quoted line is about the step itself: it shares with the step a word the
    task does not already give, a name written as code that the task gives only in plain
    words ("tcp-keepalive" for "TCP keepalive"), or a third of the step's words (numbers
    and filler aside). A line that shares a word or two of the task in general ("Redis",
    "TCP") is not about the step, and a revision written from it replaces the step with
    whatever it says; so is a line that shares only a piece of a name ("max" of
    tcp_max_syn_backlog, in "max number of clients"), or only the plain word the step opens
    with, its action ("Restart Redis ..." and a line on what a restart loads). Without
    `names` (Python, where every call and variable is a name) names count as their pieces."""
    said = _said(step)
    shared = said & set(words(fact))
    if names:
        if (names_of(step) & names_of(fact)) - tokens(question):
            return True
        whole = tokens(fact)  # a name the line gives whole is shared, pieces and all
        shared &= {
            w
            for t in _TOKEN.findall(step)
            if len(ws := words(t)) == 1 or t.lower().strip(".:") in whole
            for w in ws
        }
    given = set(words(question))
    if shared - given == {action := _action(step)}:
        shared.discard(action)
    return bool(shared - given) or 3 * len(shared) >= len(said) > 0


def _said(step: str) -> set[str]:
    """The plain words a step says something with: neither function words, filler nor
    numbers."""
    return {w for w in words(step, STOPWORDS | _FILLER) if not w.isdigit()}


_STEP_LABEL = re.compile(r"^\W*(?:\*\*[^*\n]+\*\*|[^:\n`]{1,40}):\s*")  # "**Server**: ", "Note: "


def _action(step: str) -> str:
    """The plain word a step opens with, past a label: what it does ("save", "restart"),
    rather than what it is about. Not a name: a step that opens with `maxmemory` is about
    it."""
    body = _STEP_LABEL.sub("", step.strip(), count=1)
    if body.startswith("`"):
        return ""
    first = next(iter(words(body)), "")  # "Make sticks" does "make", though it is filler
    return "" if first in {w for name in names_of(step) for w in words(name)} else first


def invented(revised: str, *known: str, code: bool = False) -> list[str]:
    """The specific names a revision gives that none of `known` (the task, the draft step,
    the passages shown) contains: a name the model made up, which a reader would copy; and
    words in a script none of them is written in, where the model switched language.
    In `code` (a config file, a shell command) every word but an amount is a name."""
    vocabulary = set().union(*map(tokens, known))
    named = [
        t
        for t in _TOKEN.findall(revised)
        if _specific(t.strip(".:")) or (code and not _AMOUNT.match(t))
    ]
    for span in _CODE_SPAN.findall(revised):
        named += [t for t in _TOKEN.findall(span) if not _AMOUNT.match(t)]
    found = []
    for token in named:
        key = token.lower().strip(".:")
        if key and key not in vocabulary and key not in found:
            found.append(key)
    if not any(_SCRIPT_SWITCH.search(text) for text in known):
        found += [run for run in _SCRIPT_SWITCH.findall(revised) if run not in found]
    return found


def tokens(text: str) -> set[str]:
    """Every word of a text as names are compared: lower case, without a closing '.' or ':'."""
    return {t.lower().strip(".:") for t in _TOKEN.findall(text)}


def names_of(text: str, code: bool = False) -> set[str]:
    """The names a text gives: words written as code ("maxmemory-policy", "ca.crt",
    "os.path"), and every word of a `code span` but amounts (values a revision may
    correct); in `code`, every word but amounts."""
    if code:
        return {w for w in tokens(text) if not _AMOUNT.match(w)} - {""}
    named = {
        key
        for t in _TOKEN.findall(text)
        if (key := t.lower().strip(".:")) and (_specific(key) or "-" in key)
    }
    for span in _CODE_SPAN.findall(text):
        named |= {t.lower().strip(".:") for t in _TOKEN.findall(span) if not _AMOUNT.match(t)}
    return named - {""}


def dropped(draft: str, revised: str, code: bool = False) -> list[str]:
    """The names the draft step gives that its revision leaves out, where the revision
    names fewer new ones in their place: such a revision says less than the draft did (a
    correction names what replaces a name). `code` as in `invented`."""
    lost = names_of(draft, code) - tokens(revised)
    added = names_of(revised, code) - tokens(draft)
    return sorted(lost) if len(added) < len(lost) else []


def new_claim(draft: str, revised: str, fact: str) -> bool:
    """Whether a revision says something other than its draft step (keeps under a third of
    the step's words) and takes from the line it quoted no name or amount the step lacked:
    neither a correction nor the step made concrete, but a new claim ("Set a memory limit"
    in place of what a memory report shows). A rewrite that names the line's setting is
    the step made concrete, however few of its words it keeps."""
    said = _said(draft)
    if 3 * len(said & set(words(revised))) >= len(said):
        return False
    given = names_of(revised) | {w for w in tokens(revised) if _AMOUNT.match(w)}
    return not (given - tokens(draft)) & tokens(fact)


def format_steps(steps: list[str]) -> str:
    return "\n".join(f"STEP {n}: {text}" for n, text in enumerate(steps, 1))


def number_sources(steps: Sequence[Step]) -> tuple[list[list[int]], list[Source]]:
    """Each step's sources as numbers into one list, deduplicated by URL (else title).

    Dropped steps are not part of the answer, so they neither count nor cite."""
    numbers: dict[str, int] = {}
    cited: list[Source] = []
    refs: list[list[int]] = []
    for step in (s for s in steps if s["status"] != "dropped"):
        mine = []
        for source in step["sources"]:
            key = source["source"] or source["title"]
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                cited.append(source)
            mine.append(numbers[key])
        refs.append(mine)
    return refs, cited


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
    text = _unbold(text).strip()
    if not says_something(text) or _CONFIDENT.match(text):
        return "unreadable", ""
    return "confident", text


# --- the grounded revision: FACT / STEP / NEEDS --------------------------------------------

_FIELD = re.compile(
    r"^\W*(fact|step|needs|drop)\b\s*(?:\d+\s*)?[*_]*\s*[:=\-\u2013]\s*[*_]*\s*(.*)$", re.IGNORECASE
)
# "DROP: the reason", as asked; in any case only with a mark after it: "Drop 3 seeds into
# the composter" and "Drop a slimeball from a nearby mob" are steps the model wrote.
_DROP = re.compile(
    r"^\W*(?:DROP(?:PED)?\b|(?i:drop(?:ped)?)\s*(?:[:=\-\u2013]|$))\W*(.*)$", re.DOTALL
)
_NOTHING = {"none", "nothing", "n/a", "na", "no", "-", "", "none needed", "nothing else"}
MAX_NEEDS = 6


@dataclass(frozen=True)
class Revision:
    """A grounded revision: the quoted fact, the step written from it, what it needs.

    `drop` holds the reason when the model says the task does not need the step.
    """

    step: str
    fact: str = ""
    needs: list[str] = field(default_factory=list)
    drop: str | None = None


def parse_revision(reply: str, number: int) -> Revision:
    """A grounded reply, as JSON or as labelled lines; never loses a step the model wrote.

    A reply in neither form is read as a plain revision (the whole reply is the step), so a
    model that ignores the format still gets its correction kept.
    """
    text = clean_reply(reply)
    fields = _json_fields(text)
    if fields is None and text.lstrip().startswith("{"):
        fields = _cut_json(text)  # a JSON reply cut off at max_tokens
    # outside JSON, unlabelled lines are the step itself when no STEP line was written
    body = (
        ""
        if fields is not None
        else "\n".join(line for line in text.splitlines() if not _FIELD.match(line))
    )
    fields = fields if fields is not None else _labelled(text)
    if fields is None or not _text(fields.get("step")):
        rest = fields or {}
        if "drop" in rest:
            return Revision("", _fact(rest.get("fact")), [], _reason(rest["drop"]))
        return Revision(pick_step(body, number), _fact(rest.get("fact")), _needs(rest.get("needs")))
    step = _text(fields["step"])
    drop = _DROP.match(step)
    if drop or "drop" in fields:
        return Revision(
            "",
            _fact(fields.get("fact")),
            _needs(fields.get("needs")),
            _reason(drop.group(1) if drop else fields.get("drop")),
        )
    step = _unbold(STEP_MARKER.sub("", step, count=1)).strip()
    return Revision(step, _fact(fields.get("fact")), _needs(fields.get("needs")))


def _json_fields(text: str) -> dict[str, object] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {str(k).lower(): v for k, v in data.items()}


_JSON_STRING = re.compile(r'"(\w+)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _cut_json(text: str) -> dict[str, object]:
    """The string fields a cut-off JSON reply finished; a field cut midway is lost, so the
    draft is kept rather than half a step."""
    fields: dict[str, object] = {}
    for name, value in _JSON_STRING.findall(text):
        try:
            fields[name.lower()] = json.loads(f'"{value}"')
        except ValueError:
            continue
    return fields


def _labelled(text: str) -> dict[str, object] | None:
    """FACT:/STEP:/NEEDS: lines; a value may run on over the lines that follow it."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match:
            current = found.setdefault(match.group(1).lower(), [])
            current.append(match.group(2))
        elif current is not None and line.strip():
            current.append(line.strip())
    if not found:
        return None
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


_LABEL_OF_LINE = re.compile(r"^\s*\[?\d{1,2}[a-z]{1,2}[.)\]]\s+")


def _fact(value: object) -> str:
    """A quoted passage without the label the documents showed it with ("1a. ")."""
    return _LABEL_OF_LINE.sub("", _text(value), count=1)


def _text(value: object) -> str:
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    text = "" if value is None else str(value).strip().strip("\"'`").strip()
    return "" if text.lower().rstrip(".") in _NOTHING else text


def _reason(value: object) -> str:
    return _text(value).lstrip(":-\u2013 ").strip() or "the task does not need it"


def _needs(value: object) -> list[str]:
    """What a step needs, as short item phrases: "none" and sentences are not items."""
    if isinstance(value, list):
        items = [str(v) for v in value]
    else:
        items = re.split(r"[,;\n]", "" if value is None else str(value))
    needs: list[str] = []
    for item in items:
        item = BULLET_MARKER.sub("", item).strip().strip("\"'`.").strip()
        if item.lower() in _NOTHING or not says_something(item) or len(item) > 80:
            continue
        if item.lower() not in (n.lower() for n in needs):
            needs.append(item)
    return needs[:MAX_NEEDS]


# --- a code step's revision: FACT / CODE ---------------------------------------------------

_CODE_BODY = re.compile(r"```[^\n]*\n(.*?)(?:\n\s*```|\Z)", re.DOTALL)


def parse_code_revision(reply: str) -> Revision:
    """A code step's revision, as JSON or as FACT:/CODE: with a fenced block: the quoted
    line and the code without its fences ("" where the reply gives none)."""
    text = strip_thinking(reply).strip()
    fields = _json_fields(text) if text.startswith("{") else None
    if fields is not None:
        code = fields.get("code")
        body = code if isinstance(code, str) else ""
        fenced = _CODE_BODY.search(body)
        return Revision(fenced.group(1) if fenced else body, _fact(fields.get("fact")))
    fact = ""
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match and match.group(1).lower() == "fact":
            fact = _fact(match.group(2))
            break
    fenced = _CODE_BODY.search(text)
    return Revision(fenced.group(1) if fenced else "", fact)
