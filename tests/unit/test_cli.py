"""The `rat` command: output, resume, and one readable line for every bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, plan_model, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent import ConfigError, cli, retrieval
from rat_agent.providers import chat
from rat_agent.repair import Settings
from rat_minecraft import repair as crafting

# the bundled model's profile drafts rag's answer: a paragraph a step
DRAFT = "get logs\n\nmake planks\n\ncraft a table"
CHECKED = "FIXED get logs\n\nFIXED make planks\n\nFIXED craft a table"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))


def install_fakes(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    """`model` behind every model name, and a fake retriever named 'fake'."""
    monkeypatch.setattr(chat, "get_chat_model", lambda name, **kw: model)
    fake = lambda ctx: ListRetriever(documents=wiki_docs(ctx.k), echo=True)  # noqa: E731
    monkeypatch.setitem(retrieval.FACTORIES, "fake", fake)
    retrieval.clear_cache()


@pytest.fixture
def fake_world(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    model = plan_model(DRAFT)
    install_fakes(monkeypatch, model)
    return model


def rat(*args: str) -> int:
    return cli.main(list(args))


def test_ask_prints_a_line_a_step_then_the_answer_and_sources(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rat("ask", "How do I craft a table?", "--retriever", "fake", "--k", "2") == 0
    out = capsys.readouterr().out
    assert "draft: 3 steps" in out
    steps = [line for line in out.splitlines() if line.startswith("STEP ")]
    assert steps[:3] == [
        "STEP 1 revised FIXED get logs",
        "STEP 2 revised FIXED make planks",
        "STEP 3 revised FIXED craft a table",
    ]
    assert "query" not in out and "sources" not in out.split("Answer")[0]
    assert CHECKED in out.split("Answer")[1]  # the checked paragraphs
    assert "[1] Page 1 — corpus:page1" in out and "[2] Page 2 — corpus:page2" in out
    assert "model calls" in out


def test_ask_verbose_prints_every_draft_query_and_change(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("ask", "How do I craft a table?", "--retriever", "fake", "--k", "2", "--verbose")
    assert rat(*args) == 0
    out = capsys.readouterr().out
    assert "Draft: 3 steps" in out
    assert "query get logs" in out  # the profile: a paragraph of an answer is its own query
    assert "STEP 3 {+FIXED+} craft a table" in out  # what the revision changed, word by word
    assert CHECKED in out.split("Answer")[1]
    assert "[1] Page 1 — corpus:page1" in out and "[2] Page 2 — corpus:page2" in out
    assert "model calls" in out


def test_ask_json_matches_the_api(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rat("ask", "How?", "--retriever", "fake", "--json", "--query-prompt", "") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["answer"] == CHECKED  # the checked paragraphs, with no call to rewrite them
    assert [s["query"] for s in result["steps"]] == ["get logs", "make planks", "craft a table"]
    assert set(result["steps"][0]) >= {"draft", "query", "sources", "revised"}
    assert result["stats"]["model_calls"] == 1 + 3  # the draft and 3 revisions
    assert rat("ask", "How?", "--retriever", "fake", "--json", "--answer-prompt", "") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["answer"].splitlines()[0] == "STEP 1: FIXED get logs"


def test_failed_run_resumes_on_its_thread(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = plan_model(DRAFT)
    respond = model.respond
    broken = {"on": True}

    def flaky(kind: str, messages: list[BaseMessage]) -> str:
        if broken["on"] and len(model.calls) == 3:  # the revision of step 2 (no query calls)
            raise ConfigError("quota exhausted")
        return respond(kind, messages)

    model.respond = flaky
    install_fakes(monkeypatch, model)

    assert rat("ask", "How?", "--retriever", "fake", "--thread", "t1") == 2
    assert "quota exhausted" in capsys.readouterr().err
    calls_before = len(model.calls)
    broken["on"] = False
    assert rat("ask", "--thread", "t1", "--json") == 0  # settings come from the thread
    result = json.loads(capsys.readouterr().out)
    assert [s["revised"] for s in result["steps"]] == [
        "FIXED get logs",
        "FIXED make planks",
        "FIXED craft a table",
    ]
    # only the failed revision and the steps after it were run again
    assert [k for k, _ in model.calls[calls_before:]] == ["revise", "revise"]

    assert rat("show", "t1") == 0
    shown = capsys.readouterr().out
    assert "finished" in shown and "FIXED make planks" in shown
    assert rat("threads") == 0
    assert "t1" in capsys.readouterr().out


def test_show_prints_what_the_draft_was_and_each_change(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rat("ask", "How?", "--retriever", "fake", "--thread", "t3") == 0
    brief = " ".join(capsys.readouterr().out.split())
    # the default model's profile drafts rag's answer, from the task's passages
    assert "draft: 3 steps, method rag's answer written from 3 passages" in brief
    assert rat("show", "t3") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "draft: method rag's answer written from 3 passages" in out
    assert "FIXED make planks" in out and "make planks" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "   "], "the question is empty"),
        (["ask", "q", "--retriever", "nope"], "unknown retriever 'nope'"),
        (["ask", "q", "--k", "0"], "k must be between 1 and 20"),
        (["ask", "q", "--max-steps", "99"], "max_steps must be between 1 and 32"),
        (["ask", "q", "--model", "gpt4"], "unknown model 'gpt4'"),
        (["ask", "q", "--model", "openai:gpt-4o-mini"], "set OPENAI_API_KEY"),
        (["show", "no-such-thread"], "no run with thread id"),
        (["ask", "--thread", "fresh"], "has no unfinished run"),
        (["collections", "delete", ""], "the collection name is empty"),
        (["collections", "delete", "a/b"], "'a/b' cannot be used"),
        (["ask", "q", "--collection", "a/b"], "'a/b' cannot be used"),
        (["memory", "list", "--collection", "a/b"], "'a/b' cannot be used"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = rat(*args)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_installed_command_reports_errors_without_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "ask", "q", "--k", "abc"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "invalid int value" in proc.stderr
    assert "Traceback" not in proc.stderr
    # a bad flag is one line naming it and its choices, not the whole usage of `rat ask`
    proc = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "ask", "hi", "--draft", "sideways"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--draft" in proc.stderr and "'cot', 'sourced'" in proc.stderr
    assert "rat ask --help" in proc.stderr
    help_text = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert help_text.returncode == 0 and "ask" in help_text.stdout


def test_time_travel_from_the_cli(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = ("ask", "How do I craft a table?", "--retriever", "fake", "--answer-prompt", "")
    assert rat(*ask, "--thread", "tt") == 0
    capsys.readouterr()
    assert rat("show", "tt", "--history") == 0
    assert "next: to_query" in capsys.readouterr().out
    calls = len(fake_world.calls)
    assert (
        rat("ask", "--thread", "tt", "--from-step", "3", "--edit", "craft two tables", "--quiet")
        == 0
    )
    out = capsys.readouterr().out
    assert "STEP 1: FIXED get logs" in out and "STEP 3: FIXED craft two tables" in out
    assert [kind for kind, _ in fake_world.calls[calls:]] == ["query", "revise"]
    assert rat("ask", "--thread", "tt", "--edit", "x") == 2
    assert "--edit goes with --from-step" in capsys.readouterr().err
    for bad in ("0", "4"):
        assert rat("ask", "--thread", "tt", "--from-step", bad) == 2
        assert f"step must be between 1 and 3, got {bad}" in capsys.readouterr().err


def repairing_model() -> ScriptedModel:
    """Step 1 needs 2 logs (inserted before it); step 2 is not needed (dropped)."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:

        if kind == "draft":
            return "STEP 1: make planks\nSTEP 2: dance"
        if kind == "query":
            return current_step(messages)
        step = current_step(messages)
        if step in ("make planks", "Craft 8 planks from 2 logs"):
            return "FACT: 1a. 2 logs give 8 planks\nSTEP: Craft 8 planks from 2 logs\nNEEDS: 2 logs"
        if step == "Get 2 logs.":
            return "FACT: 1a. logs\nSTEP: Chop 2 logs\nNEEDS: none"
        return "FACT: none\nSTEP: DROP: dancing makes nothing\nNEEDS: none"

    return ScriptedModel(respond=respond, calls=[])


def test_ask_shows_inserted_and_dropped_steps(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_fakes(monkeypatch, repairing_model())
    quiet = Settings(min_support=0, stop_at_goal=False, reach_goal=False)
    monkeypatch.setattr(crafting.REPAIR, "settings", quiet)  # the plug-in's settings
    ask = ("ask", "How do I make planks?", "--retriever", "fake", "--repair", "minecraft")
    assert rat(*ask) == 0
    brief = capsys.readouterr().out
    assert "STEP 1 inserted Chop 2 logs\n" in brief
    assert "STEP 3 dropped dance\n" in brief
    assert rat(*ask, "--verbose") == 0
    out = capsys.readouterr().out
    assert "needs Get 2 logs. (inserted before: Craft 8 planks from 2 logs)" in out
    assert "STEP 1 Chop 2 logs (inserted: needed by: Craft 8 planks from 2 logs)" in out
    assert "(dropped: dancing makes nothing)" in out
    assert "STEP 1: Chop 2 logs\nSTEP 2: Craft 8 planks from 2 logs\n" in out
    assert rat(*ask, "--json") == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [s["status"] for s in steps] == ["inserted", "revised", "dropped"]
    assert steps[0]["makes"] == "2 logs" and steps[1]["needs"] == ["2 logs"]
    assert steps[2]["note"] == "dancing makes nothing"


def test_ask_shows_a_step_appended_for_the_goal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:

        if kind == "draft":
            return "STEP 1: find a forest"
        if kind == "goal":
            return "planks"
        if current_step(messages) == "Get planks.":
            return "FACT: 1a. 1 log gives 4 planks\nSTEP: Craft 4 planks from 1 log\nNEEDS: none"
        return f"FACT: 1a. forests\nSTEP: {current_step(messages)}\nNEEDS: none"

    install_fakes(monkeypatch, ScriptedModel(respond=respond, calls=[]))
    args = ("ask", "How do I make planks?", "--retriever", "fake", "--query-prompt", "")
    args = (*args, "--repair", "minecraft")
    quiet = Settings(min_support=0, stop_at_goal=False, reach_goal=True)
    monkeypatch.setattr(crafting.REPAIR, "settings", quiet)
    assert rat(*args, "--verbose") == 0
    out = capsys.readouterr().out
    assert "needs Get planks. (appended: the plan ended before a step made 'planks')" in out
    assert "STEP 1: find a forest\nSTEP 2: Get 1 log.\nSTEP 3: Craft 4 planks from 1 log\n" in out
    monkeypatch.setattr(crafting.REPAIR, "settings", replace(quiet, reach_goal=False))
    assert rat(*args) == 0
    assert "STEP 2" not in capsys.readouterr().out


def test_text_from_sources_and_the_model_cannot_drive_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ESC sequences (clear the screen, set the window title), other controls and bidi
    overrides are stripped; Rich markup in a title is shown as text."""
    from langchain_core.documents import Document

    hostile = "\x1b[2J\x1b]0;pwned\x07[bold red]Evil[/bold red]\u202etxt\x9b"
    model = plan_model(f"STEP 1: get logs {hostile}\nSTEP 2: make planks")
    install_fakes(monkeypatch, model)
    doc = Document(page_content=f"logs {hostile}", metadata={"title": hostile, "source": "s"})
    monkeypatch.setitem(retrieval.FACTORIES, "fake", lambda ctx: ListRetriever(documents=[doc]))
    retrieval.clear_cache()
    assert rat("ask", "How?", "--retriever", "fake", "--k", "1") == 0
    out = capsys.readouterr().out
    assert "[bold red]Evil[/bold red]" in out  # markup shown, not applied
    for control in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert control not in out


def test_a_data_folder_that_is_a_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("RAT_DATA_DIR", str(blocker))
    assert rat("threads") == 2
    assert capsys.readouterr().err.strip() == (
        f"error: cannot use {blocker} as the RAT_DATA_DIR folder: it is a file"
    )


@pytest.mark.parametrize("flag", ["--tasks", "--samples", "--concurrency"])
def test_eval_counts_must_be_positive(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        rat("eval", flag, "-1")
    assert info.value.code == 2
    assert "must be at least 1, got -1" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["--json", "--quiet"])
def test_ctrl_c_names_the_thread_to_resume(
    fake_world: ScriptedModel,
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rat_agent.cli import review

    def interrupt(snapshot: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(review, "pending_review", interrupt)
    assert rat("ask", "How?", "--retriever", "fake", "--thread", "t-ctrl-c", mode) == 130
    assert "resume with `rat ask --thread t-ctrl-c`" in capsys.readouterr().err


def test_a_closed_pipe_is_a_quiet_exit(tmp_path: Path) -> None:
    """`rat ... | head -1`: the reader left; no error text, the exit of a Unix tool (141)."""
    import os

    read, write = os.pipe()
    os.close(read)  # the reader is gone before rat writes anything
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rat_agent.cli", "models"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "RAT_CACHE_DIR": str(tmp_path)},
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_bad_model_leaves_no_thread_behind(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for model in ("gpt4", "openai:gpt-4o-mini", "nosuchprovider:x"):
        assert rat("ask", "q", "--model", model, "--thread", "bad-model") == 2
    capsys.readouterr()
    assert rat("show", "bad-model") == 2
    assert "no run with thread id" in capsys.readouterr().err


def test_the_docs_import_path_retriever_runs_as_written(tmp_path: Path) -> None:
    """my_kb.py from docs/sources.md, in the folder `rat` runs in, with the installed script (its
    folder is not on sys.path by itself); a fake model by import path keeps it offline."""
    import os
    import re

    readme = (Path(__file__).parents[2] / "docs" / "sources.md").read_text()
    code = re.search(r"```python\n(# my_kb\.py.*?)```", readme, re.S)
    question = re.search(r'```bash\nrat ask "(.*?)" --retriever my_kb:retriever\n```', readme)
    assert code and question
    (tmp_path / "my_kb.py").write_text(code.group(1))
    rat_script = Path(sys.executable).parent / "rat"
    argv = [str(rat_script), "ask", question.group(1), "--retriever", "my_kb:retriever"]
    tests = str(Path(__file__).parents[1])
    done = subprocess.run(
        [*argv, "--model", "fakes:make_model", "--query-prompt", ""],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": tests, "RAT_DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Basalt — notes/basalt" in done.stdout


def test_ctrl_c_exits_at_once_with_a_model_call_in_flight(tmp_path: Path) -> None:
    """The interpreter would wait at shutdown for the worker thread still in its model call
    (a prefill can take minutes); `rat` leaves at once with 130 and the resume hint."""
    import os
    import signal
    import time

    tests = str(Path(__file__).parents[1])
    argv = ["ask", "How?", "--thread", "t-hang", "--model", "fakes:hanging_model"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rat_agent.cli", *argv, "--method", "direct"],
        env={**os.environ, "PYTHONPATH": tests, "RAT_DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a shell's background job starts with SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None and proc.stderr is not None
    while "CALL STARTED" not in proc.stdout.readline():
        assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    try:
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
    assert code == 130
    assert time.monotonic() - started < 60
    assert "resume with `rat ask --thread t-hang`" in proc.stderr.read()


@pytest.mark.parametrize("delay", [0.4, 0.8])
def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path, delay: float) -> None:
    """While `rat` is still importing LangGraph and LangChain: no traceback, exit 130."""
    import os
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "rat_agent.cli", "ask", "How?", "--model", "fakes:hanging_model"],
        env={
            **os.environ,
            "PYTHONPATH": str(Path(__file__).parents[1]),
            "RAT_DATA_DIR": str(tmp_path),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1].startswith("interrupted")
    assert "Traceback" not in err


def test_ctrl_c_during_ingest_says_what_is_kept(tmp_path: Path) -> None:
    """Each command says what Ctrl+C leaves behind; here an ingest waiting on a page."""
    import os
    import signal
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(60)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/page"
        proc = subprocess.Popen(
            [sys.executable, "-m", "rat_agent.cli", "ingest", url, "--allow-private"],
            env={**os.environ, "RAT_DATA_DIR": str(tmp_path)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        connection, _ = server.accept()  # the fetch is under way; the page never comes
        with connection:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == (
        "interrupted: what was stored is kept; run the same command again to finish"
    )


def test_eval_keep_runs_lets_show_explain_each_score(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ("eval", "--methods", "rat", "--tasks", "1", "--retriever", "fake", "--out", str(out))
    assert rat(*args, "--label", "t", "--keep-runs") == 0
    assert "runs kept: rat show KEY" in capsys.readouterr().err
    (row,) = [json.loads(line) for line in (out / "t.jsonl").read_text().splitlines()]
    assert rat("show", row["key"], "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "finished" and shown["answer"] == row["answer"]
    assert [s["status"] for s in shown["steps"]] == ["revised"] * 3 and shown["drafts"]
    assert rat(*args, "--label", "u", "--set", "k=2") == 0
    (other,) = [json.loads(line) for line in (out / "u.jsonl").read_text().splitlines()]
    assert rat("show", other["key"]) == 2  # without --keep-runs nothing is kept


def test_eval_reports_progress_as_lines_when_stderr_is_not_a_terminal(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under nohup or a pipe the bar draws nothing; a long evaluation must still say where
    it is (the first line counts what the cache already holds)."""
    out = tmp_path / "out"
    args = ("eval", "--methods", "cot", "--tasks", "2", "--retriever", "fake")
    assert rat(*args, "--out", str(out), "--label", "t") == 0
    assert capsys.readouterr().err.splitlines() == ["evaluated 0/2", "evaluated 2/2"]
    assert rat(*args, "--out", str(out), "--label", "t") == 0
    assert capsys.readouterr().err.splitlines() == ["evaluated 2/2"]  # all cached
    report = (out / "t.md").read_text()
    assert "| method | plans | median steps | median reference steps |" in report
    assert report.splitlines()[-1].startswith("| cot | 2 | ")  # each plan against the planner's
    # the file says what made it; plots only when asked for
    assert [line.split(":")[0] for line in report.splitlines()[2:5]] == [
        "- command",
        "- code",
        "- score",
    ]
    assert not list(out.glob("*.png"))
    assert rat(*args, "--out", str(out), "--label", "t", "--plots") == 0
    assert sorted(p.name for p in out.glob("*.png")) == ["t-cost.png", "t-score.png"]


def test_eval_only_runs_those_tasks_under_the_whole_runs_keys(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fix is checked on the tasks it was written for; the results must be the very runs
    the whole selection would make, so they count there and nothing is computed twice."""
    out = tmp_path / "out"
    args = ("eval", "--methods", "cot", "--tasks", "2", "--retriever", "fake", "--out", str(out))
    assert rat(*args, "--label", "all") == 0
    first, second = [json.loads(line) for line in (out / "all.jsonl").read_text().splitlines()]
    capsys.readouterr()
    assert rat(*args, "--label", "one", "--only", second["task"]) == 0
    assert capsys.readouterr().err.splitlines() == ["evaluated 1/1"]  # cached by the whole run
    (row,) = [json.loads(line) for line in (out / "one.jsonl").read_text().splitlines()]
    assert row["key"] == second["key"] != first["key"]
    assert f"--only {second['task']}" in (out / "one.md").read_text()
    assert rat(*args, "--only", "mc-no_such_thing") == 2
    err = capsys.readouterr().err
    assert "--only: not among the selected tasks: mc-no_such_thing" in err
    assert len(err.strip().splitlines()) == 1


def test_eval_vary_runs_each_value_under_the_keys_of_set_and_compares_them(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ("eval", "--methods", "cot", "--tasks", "2", "--retriever", "fake", "--out", str(out))
    assert rat(*args, "--label", "v", "--vary", "k=2,3") == 0
    assert capsys.readouterr().err.splitlines()[-1] == "evaluated 4/4"
    rows = [json.loads(line) for line in (out / "v.jsonl").read_text().splitlines()]
    assert [r["method"] for r in rows] == ["cot k=2", "cot k=3"] * 2
    report = (out / "v.md").read_text()
    assert "--vary k=2,3" in report and "cot: each value against k=2" in report
    assert "| cot k=3 | 2 |" in report  # the paired table: 2 tasks both values did
    assert rat(*args, "--label", "s", "--set", "k=3") == 0
    assert capsys.readouterr().err.splitlines() == ["evaluated 2/2"]  # cached by --vary
    assert rat(*args, "--vary", "k=3") == 2
    assert "two or more different values" in capsys.readouterr().err
    assert rat(*args, "--label", "w", "--vary", "k=2,3", "--vary", "max_tokens=512,256") == 0
    # The base arm (k=2, max_tokens=512 is --max-tokens) and k=3 are cached from above.
    assert capsys.readouterr().err.splitlines()[0] == "evaluated 4/6"
    report = (out / "w.md").read_text()
    assert "--vary k=2,3 --vary max_tokens=512,256" in report
    assert "| cot max_tokens=256 | 2 |" in report and "against k=2 max_tokens=512" in report


def test_the_cli_page_lists_every_flag_of_rat_ask() -> None:
    """docs/cli.md's list of `rat ask` flags is how users find a setting; a context field
    added without its flag there is a setting nobody finds."""
    import re

    from rat_agent.cli.ask import CONTEXT_FLAGS

    readme = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    listed = re.search(r"One flag per context field \(`([^`]*)`\)", readme)
    assert listed is not None
    flags = set(listed.group(1).split())
    assert flags == {"--" + name.replace("_", "-") for name in CONTEXT_FLAGS}


def test_the_cli_page_lists_every_flag_of_rat_eval() -> None:
    import argparse
    import re

    from rat_agent.cli.app import _parser

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    options = {
        flag
        for action in sub.choices["eval"]._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help"
    }
    readme = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    listed = re.search(r"`rat eval` takes `([^`]*)`", readme)
    assert listed is not None
    assert set(listed.group(1).split()) == options
