"""The package's layers: every import points down (or stays in its own folder)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "rat_agent"

# Lowest first. A folder may import its own modules and any lower layer, nothing else.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"terms"}),  # words as search reads them, and the grounded revision's check
    # below errors, which masks its messages with them: secrets, and a served user's paths
    frozenset({"redact", "served"}),
    frozenset({"errors"}),  # the typed errors the reply parser and a setting's reader raise
    frozenset({"ahead", "parsing", "text", "timing"}),
    # aio runs a node's body, and shows a served user a foreign error as one of errors'
    frozenset({"paths", "limits", "plugins", "aio"}),
    frozenset({"providers"}),
    frozenset({"minecraft"}),
    frozenset({"retrieval"}),
    frozenset({"memory"}),
    frozenset({"ingest"}),
    frozenset({"persistence"}),
    # how a node reaches the model and the source, and a run as a turn of a chat
    frozenset({"services", "chat"}),
    frozenset({"agent"}),
    frozenset({"repair"}),  # the loop's extension: the core names it by import path
    frozenset({"tool", "timetravel"}),  # the graph as a LangChain tool; a run's checkpoints
    # the server's keys, auth handler and app, which Aegra loads by path: above the loop,
    # which only calls the checks the server attaches (served.attach)
    frozenset({"serve"}),
    frozenset({"ui"}),  # the web page, beside the server's API
    frozenset({"eval"}),
    frozenset({"cli"}),
)
# Modules that build a retriever: users of retrieval above it go through the registry
# (`rat_agent.retrieval`), and memory and ingest use only Qdrant's client and collection.
RETRIEVER_MODULES = frozenset(
    {
        "retrieval.tavily",
        "retrieval.keyless",
        "retrieval.imported",
        "retrieval.qdrant.retriever",
    }
)


def _layer(part: str) -> int:
    return next(n for n, layer in enumerate(LAYERS) if part in layer)


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p != PACKAGE / "__init__.py"]


def _is_module(dotted: str) -> bool:
    path = PACKAGE.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or path.is_dir()


def _imports(path: Path) -> set[str]:
    """rat_agent modules `path` imports, relative to the package ("" for the facade),
    wherever in the file the import is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("rat_agent").lstrip(".")
                for a in node.names
                if a.name.split(".")[0] == "rat_agent"
            }
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "rat_agent"
        ):
            base = node.module.removeprefix("rat_agent").lstrip(".")
            for alias in node.names:
                inner = f"{base}.{alias.name}".lstrip(".")
                found.add(inner if _is_module(inner) else base)
    return found


def _name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


@pytest.mark.parametrize("path", _modules(), ids=_name)
def test_imports_point_down(path: Path) -> None:
    here = _name(path)
    top = here.split(".")[0]
    wrong = []
    for module in _imports(path):
        if module == "":
            wrong.append("rat_agent (the facade: import the module itself)")
            continue
        there = module.split(".")[0]
        if there != top and _layer(there) >= _layer(top):
            wrong.append(module)
        if top not in ("retrieval",) and module in RETRIEVER_MODULES:
            wrong.append(f"{module} (a retriever: go through rat_agent.retrieval)")
    assert not wrong, f"{here} imports upward or sideways: {sorted(wrong)}"


def test_the_core_knows_no_domain() -> None:
    """A domain plugs in (rat_agent.plugins): the loop never names one, and no module of
    rat_agent imports the bundled domain package, wherever in the file."""
    named = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sorted((PACKAGE / "agent").rglob("*.py"))
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if "minecraft" in line.lower()
    ]
    assert named == []
    importing = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            importing += [
                f"{_name(path)}: {m}" for m in names if m.split(".")[0] == "rat_minecraft"
            ]
    assert importing == []


def test_every_folder_has_a_layer() -> None:
    tops = {_name(p).split(".")[0] for p in _modules()}
    assert tops <= set().union(*LAYERS)


HEAVY = (
    "torch",
    "sentence_transformers",
    "qdrant_client",
    "xllamacpp",
    "langchain_openai",
    "langchain_core",
    "langgraph",
)


@pytest.mark.parametrize("module", ["rat_agent", "rat_agent.agent.context", "rat_agent.errors"])
def test_light_imports_stay_light(module: str) -> None:
    """The package and the settings load no model, search or graph library: exports load
    on first use (`from rat_agent import build_graph` still works)."""
    code = f"import sys, {module}; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_direct_answer_on_the_local_model_loads_no_sdk_or_retrieval_library() -> None:
    """What `rat ask --method direct` imports before its model call (issue 15's fixed cost:
    the openai SDK alone was 0.4 s; numpy and the HTML cleaner are for retrievals)."""
    code = (
        "import sys, rat_agent.agent.graph, rat_agent.providers.chat, "
        "rat_agent.providers.local_chat\n"
        "print([m for m in ('openai', 'langchain_openai', 'torch', 'numpy', 'bs4', "
        "'qdrant_client') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_facade_exports_load_on_first_use() -> None:
    import rat_agent

    assert {name: getattr(rat_agent, name).__name__ for name in rat_agent.__all__} == {
        name: name for name in rat_agent.__all__
    }
    with pytest.raises(AttributeError):
        rat_agent.nothing_here  # noqa: B018


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["ask", "--help"],
        ["eval", "--help"],
        ["ingest", "--help"],
        ["memory", "--help"],
        ["models", "--help"],
    ],
)
def test_help_loads_no_heavy_library(argv: list[str]) -> None:
    assert _loaded_by_cli(argv, [*HEAVY, "langchain"]) == "[]"


def _loaded_by_cli(argv: list[str], modules: list[str]) -> str:
    """Which of `modules` `rat ARGV` loads, run in a fresh interpreter (as printed)."""
    code = (
        "import sys\nfrom rat_agent.cli import main\ntry:\n"
        f"    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {modules!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        (["threads"], ()),
        (["models"], ()),
        (["show", "no-such-thread"], ()),
        # Listing a Qdrant store needs the Qdrant client; nothing else heavy.
        (["collections"], ("qdrant_client",)),
        (["memory", "list"], ("qdrant_client",)),
    ],
)
def test_listing_commands_load_no_model_or_embedder(
    argv: list[str], allowed: tuple[str, ...]
) -> None:
    """What `rat threads`, `show`, `collections` and `memory list` may load: they read
    checkpoints or Qdrant, so they never need torch, the embedder, llama.cpp or a provider."""
    banned = [m for m in HEAVY[:5] if m not in allowed]
    assert _loaded_by_cli(argv, banned) == "[]"


def test_no_module_uses_langgraphs_private_api() -> None:
    """A LangGraph release may move what `langgraph._internal` holds at any time."""
    private = [
        f"{path.relative_to(PACKAGE.parent)}"
        for path in sorted(PACKAGE.parent.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            name.startswith("langgraph._internal")
            for name in (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
        )
    ]
    assert private == []
