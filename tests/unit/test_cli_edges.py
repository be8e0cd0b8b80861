"""The command line's rough edges a new user met, each as it behaves now: settings that name
where a bad value came from, an ingest that found nothing, deletions that ask first, runs
listed with their date and model and deletable, a long question shown short."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from test_cli import fake_world, rat  # noqa: F401  (a fixture)

from rat_agent import ConfigError
from rat_agent.agent.context import Context


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("RAT_K", "99", "k must be between 1 and 20"),
        ("RAT_METHOD", "best", "method must be one of"),
    ],
)
def test_a_bad_setting_in_the_environment_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, raw: str, said: str
) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(ConfigError) as bad:
        Context()
    assert said in str(bad.value) and f"(from the environment variable {name})" in str(bad.value)
    assert Context(
        **{
            name.removeprefix("RAT_").lower(): Context.__dataclass_fields__[
                name.removeprefix("RAT_").lower()
            ].default
        }
    )  # a value given wins over the variable


def test_an_unknown_setting_is_a_configuration_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"unknown setting 'modle': the settings are .*model"):
        Context(modle="x")  # type: ignore[call-arg]


def test_ingest_of_a_folder_with_nothing_to_read_says_so_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert rat("ingest", str(tmp_path / "empty"), "--collection", "c") == 1
    assert "nothing to ingest" in capsys.readouterr().err


def test_deleting_a_collection_asks_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.md").write_text("# Notes\n\nThe backups run at noon every day.\n")
    assert rat("ingest", str(tmp_path / "a.md"), "--collection", "notes") == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # a script: no terminal to ask
    assert rat("collections", "delete", "notes") == 2
    assert "add --yes to confirm" in capsys.readouterr().err
    assert rat("collections") == 0 and "notes" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert rat("collections", "delete", "notes") == 1
    assert rat("collections", "delete", "notes", "--yes") == 0
    capsys.readouterr()
    assert rat("collections") == 0 and "notes" not in capsys.readouterr().out


def test_runs_are_listed_with_date_and_model_and_deleted_on_request(
    fake_world: object,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert rat("threads") == 0
    assert "no runs yet" in capsys.readouterr().out
    question = "How do I craft a table? " + "x" * 19_000
    assert rat("ask", question, "--retriever", "fake", "--thread", "t9") == 0
    capsys.readouterr()
    assert rat("threads") == 0
    (line,) = [row for row in capsys.readouterr().out.splitlines() if row.startswith("t9")]
    assert " local " in f" {' '.join(line.split())} " and "-" in line.split()[1]  # a date
    assert rat("show", "t9") == 0
    shown = capsys.readouterr().out
    assert "(19,024 characters; --json shows it all)" in shown and "x" * 400 not in shown
    assert rat("show", "t9", "--json") == 0
    assert json.loads(capsys.readouterr().out)["question"] == question
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert rat("threads", "delete", "t9") == 2  # asks first
    assert rat("threads", "delete", "t9", "--yes") == 0
    assert rat("show", "t9") == 2
    assert rat("threads", "delete", "t9", "--yes") == 2  # gone
