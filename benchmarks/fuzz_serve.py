"""Property-based requests over the served API: does any request a client can send get a 500?

Starts a keyed `make serve` with the project's own script (two workers, PostgreSQL and Redis
on loopback), reads the OpenAPI the server describes, and runs schemathesis (its
`not_a_server_error` check) over every operation with one user's key, bounded in examples
per operation and in time; then stops the stack. Runs use the tests' fake model and
retriever, so a run the fuzzer starts costs no model. Loopback only: the server listens on
127.0.0.1 and schemathesis is given that address.

schemathesis lives in a venv of its own (.venv-fuzz, made on the first run): it speaks to
the server over HTTP only, and its releases that work with the project's pinned hypothesis
need a jsonschema-rs the Agent Protocol server's own dependency (langgraph-api) refuses.

    python benchmarks/fuzz_serve.py --max-examples 10 --seconds 480 \\
        --out benchmarks/results/fuzz-serve.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from rat_agent.cli.eval import header

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "scripts" / "serve.sh"
FUZZ_VENV = ROOT / ".venv-fuzz"
SCHEMATHESIS = "schemathesis==4.32.5"


def _schemathesis() -> Path:
    tool = FUZZ_VENV / "bin" / "schemathesis"
    if not tool.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(FUZZ_VENV)], check=True)
        pip = [str(FUZZ_VENV / "bin" / "pip"), "install", "-q", SCHEMATHESIS]
        subprocess.run(pip, check=True)
    return tool


def _serve(*args: str, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        ["bash", str(SERVE), *args], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        sys.exit(f"serve.sh {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout.split()


def _key(user: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "serve-keys", "add", user],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def _findings(events: Path) -> tuple[Counter[str], list[tuple[str, str]]]:
    """From schemathesis's event stream (written as it goes, so a run stopped at the time
    bound keeps what it did): the answers by status class, and (operation, what went wrong)
    for each 5xx answer and each request that got no answer."""
    answers: Counter[str] = Counter()
    found: list[tuple[str, str]] = []
    if not events.is_file():
        return answers, found
    for line in events.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # the last line of a stopped run may be cut
        if error := event.get("NonFatalError"):
            value = error.get("value", {})
            found.append((error.get("label", "?"), f"{value.get('type')}: {value.get('message')}"))
        scenario = event.get("ScenarioFinished")
        if not scenario:
            continue
        recorder = scenario.get("recorder", {})
        label = recorder.get("label", "?")
        for interaction in recorder.get("interactions", {}).values():
            status = (interaction.get("response") or {}).get("status_code")
            if status is None:
                continue
            answers[f"{status // 100}xx"] += 1
            if status >= 500:
                request = interaction.get("request", {})
                found.append(
                    (
                        label,
                        f"HTTP {status} to {request.get('method')} "
                        f"{request.get('uri', '').split('/', 3)[-1]}",
                    )
                )
        for checks in recorder.get("checks", {}).values():
            for check in checks:
                if check.get("status") not in (None, "success") and check.get("name") != (
                    "not_a_server_error"
                ):
                    found.append((label, f"{check.get('name')}: {check.get('status')}"))
    return answers, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=10, help="per operation")
    parser.add_argument("--seconds", type=int, default=480, help="the fuzzer's time bound")
    parser.add_argument("--phases", default="examples,coverage,fuzzing,stateful")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/fuzz-serve.md")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rat-fuzz-"))
    env = {
        **os.environ,
        "RAT_SERVE_DIR": str(folder),
        "RAT_SERVE_PORT": "0",
        "RAT_SERVE_KEYS": str(folder / "keys.json"),
        "PYTHONPATH": str(ROOT / "tests"),
        "RAT_IMPORTS": "fakes",
        "RAT_MODEL": "fakes:tagged_model",  # a run the fuzzer starts costs no model
        "RAT_RETRIEVER": "fakes:make_retriever",
        "RAT_KEEP_ALIVE": "0",
    }
    key = _key("fuzz", env)
    urls = _serve("start", "2", env=env)
    events = folder / "events.ndjson"
    started = time.monotonic()
    try:
        schema = httpx.get(f"{urls[0]}/openapi.json", headers={"x-api-key": key}, timeout=30).json()
        (folder / "openapi.json").write_text(json.dumps(schema))
        operations = sum(
            1
            for item in schema.get("paths", {}).values()
            for method in item
            if method in {"get", "post", "put", "patch", "delete"}
        )
        command = [
            str(_schemathesis()),
            "run",
            str(folder / "openapi.json"),
            "--url",
            urls[0],
            "--header",
            f"x-api-key: {key}",
            "--checks",
            "not_a_server_error",
            "--max-examples",
            str(args.max_examples),
            "--phases",
            args.phases,
            "--request-timeout",
            "30",
            "--workers",
            "1",
            "--report",
            "ndjson",
            "--report-ndjson-path",
            str(events),
        ]
        with (folder / "schemathesis.log").open("w") as log:
            fuzz = subprocess.Popen(  # in the temporary folder: its cache stays there
                command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder
            )
            try:
                fuzz.wait(timeout=args.seconds)
                finished = True
            except subprocess.TimeoutExpired:
                fuzz.terminate()
                fuzz.wait(timeout=30)
                finished = False
    finally:
        logs = "".join(p.read_text(errors="replace") for p in folder.glob("worker-*/log"))
        _serve("stop", env=env)
    seconds = time.monotonic() - started
    answers, failed = _findings(events)
    errors = Counter(re.findall(r'" (5\d\d) ', logs))  # the access log's 5xx answers
    lines = [
        header(
            "Property-based requests over the served API (schemathesis, not_a_server_error)",
            f"python benchmarks/fuzz_serve.py --max-examples {args.max_examples} "
            f"--seconds {args.seconds} --phases {args.phases}",
        ),
        f"- served: a keyed `make serve` (2 workers, PostgreSQL, Redis) on 127.0.0.1, one "
        f"user's key; runs on the tests' fake model; {operations} operations in the OpenAPI",
        f"- {'finished' if finished else 'stopped at the time bound'} after {seconds:.0f} s "
        f"({SCHEMATHESIS}); answers: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(answers.items())),
        "- 5xx answers in the workers' access logs: "
        + (", ".join(f"{n} x {code}" for code, n in sorted(errors.items())) or "none"),
        "",
        "| operation | what failed |",
        "|---|---|",
        *[f"| {name} | {why.replace('|', '/')} |" for name, why in failed],
    ]
    if not failed:
        lines.append("| - | nothing: no 5xx answer, failed check or error |")
    args.out.write_text("\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
