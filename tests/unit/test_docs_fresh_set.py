"""The held-out how-to set over PHP's php.ini (php-01..php-20): it loads as `rat eval
--benchmark php` finds it, every key's setting is on the line of the file cited for it, and
the scorer gives a right answer all its keys and a wrong one fewer."""

from __future__ import annotations

import re

import pytest

from rat_agent.eval import docs
from rat_agent.eval.runner import Case

DOCSET = docs.read_set(docs.FOLDER / "php_questions.json")
QUESTIONS = docs.load_questions(DOCSET)
LINES = DOCSET.document.read_text().splitlines()

# Hand-written answers: one naming every key, one that misses or gets a value wrong.
ANSWERS = {
    "php-01": (
        "In php.ini set:\n```ini\nupload_max_filesize = 100M\npost_max_size = 120M\n```",
        "Set upload_max_filesize = 100M and restart PHP-FPM.",
    ),
    "php-02": (
        "Raise `memory_limit` to 512M and set `max_execution_time` to 120 (seconds).",
        "memory_limit = 512M\nmax_execution_time = 30",
    ),
    "php-03": (
        "error_log = /var/log/php/app-errors.log (and keep log_errors = On)",
        "Point the web server's ErrorLog at /var/log/php/app-errors.log.",
    ),
    "php-04": (
        'date.timezone = "Europe/Berlin"',
        "Call date_default_timezone_set('Europe/Berlin') at the top of each script.",
    ),
    "php-05": (
        "Set session.cookie_secure to On, session.cookie_httponly to 1 and "
        'session.cookie_samesite to "Strict".',
        "session.cookie_secure = On\nsession.cookie_httponly = On\nsession.cookie_samesite = Lax",
    ),
    "php-06": ("Set session.use_strict_mode = 1 in php.ini.", "session.use_only_cookies = 1"),
    "php-07": (
        "session.cookie_lifetime = 2592000 and session.gc_maxlifetime = 2592000 (30 days)",
        "session.cookie_lifetime = 2592000; leave session.gc_maxlifetime at 1440",
    ),
    "php-08": (
        "session.sid_length = 48\nsession.sid_bits_per_character = 6",
        "session.sid_length = 48\nsession.sid_bits_per_character = 5",
    ),
    "php-09": (
        "opcache.memory_consumption=256\nopcache.max_accelerated_files=20000",
        "opcache.memory_consumption=256\nopcache.interned_strings_buffer=16",
    ),
    "php-10": ("opcache.validate_timestamps=0", "opcache.revalidate_freq=0"),
    "php-11": ("allow_url_fopen = Off", "allow_url_include = Off"),
    "php-12": ("disable_functions = shell_exec,passthru,proc_open", "disable_functions = exec"),
    "php-13": ("open_basedir = /srv/app/", "doc_root = /srv/app"),
    "php-14": ("pcre.backtrack_limit=1000000", "pcre.recursion_limit=1000000"),
    "php-15": (
        "mail.add_x_header = On\nmail.log = /var/log/php/mail-calls.log",
        "mail.add_x_header = Off\nmail.log = /var/log/php/mail-calls.log",
    ),
    "php-16": (
        'session.save_path = "2;/var/lib/php/sessions"',
        'session.save_path = "/var/lib/php/sessions"',
    ),
    "php-17": ('variables_order = "EGPCS"', 'variables_order = "GPCS"'),
    "php-18": (
        "zend.exception_ignore_args = Off\nzend.exception_string_param_max_len = 200",
        "zend.exception_ignore_args = On\nzend.exception_string_param_max_len = 200",
    ),
    "php-19": (
        "opcache.preload=/var/www/app/preload.php\nopcache.preload_user=www-data",
        "opcache.preload=/var/www/app/preload.php",
    ),
    "php-20": ("cgi.fix_pathinfo=0", "cgi.fix_pathinfo=1"),
}


def _setting(key: docs.Key) -> str:
    return re.split(r"[\s=]", key if isinstance(key, str) else key[0], maxsplit=1)[0]


def _case(question_id: str) -> Case:
    return next(c for c in docs.cases(docset=DOCSET) if c.id == question_id)


def test_the_set_loads_as_rat_eval_finds_it() -> None:
    assert docs.SETS["php"] == DOCSET
    assert (DOCSET.title, DOCSET.collection) == (
        "How-to questions over php.ini (held out)",
        "php-docs",
    )
    assert (docs.FOLDER / "LICENSE.php").read_text().startswith("php.ini: ")
    assert [q["id"] for q in QUESTIONS] == [f"php-{n:02d}" for n in range(1, 21)]
    assert {q["split"] for q in QUESTIONS} == {"test"} and docs.cases("tune", docset=DOCSET) == []
    assert sorted(ANSWERS) == [q["id"] for q in QUESTIONS]


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_every_key_is_a_setting_on_its_cited_line_and_not_the_files_own_value(
    question: dict[str, object],
) -> None:
    keys, lines = question["keys"], question["lines"]
    assert isinstance(keys, list) and isinstance(lines, list) and len(keys) == len(lines)
    assert 1 <= len(keys) <= 3
    for key, line in zip(keys, lines, strict=True):
        setting = _setting(key)
        options = [key] if isinstance(key, str) else key
        assert all(_setting(option) == setting for option in options)
        # a setting written at the start of its line, commented out (";") or not
        written = LINES[line - 1].lstrip("; ")
        assert re.match(rf"{re.escape(setting)}\s*=", written), (setting, line, written)
        assert setting not in str(question["question"])  # the user's words, not its name
        assert not docs.named(key, written)  # the file's own value is not the answer


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_an_answer_naming_every_key_scores_one_and_one_missing_a_key_less(
    question: dict[str, object],
) -> None:
    case = _case(str(question["id"]))
    keys = question["keys"]
    assert isinstance(keys, list)
    canonical = [k if isinstance(k, str) else k[0] for k in keys]
    assert docs.score(case, "\n".join(canonical)).score == 1.0
    for left_out in range(len(canonical)):
        rest = canonical[:left_out] + canonical[left_out + 1 :]
        assert docs.score(case, "\n".join(rest)).score == (len(keys) - 1) / len(keys)
    right, wrong = ANSWERS[case.id]
    assert docs.score(case, right).score == 1.0
    assert docs.score(case, wrong).score < 1.0
    # cited, the file gives every key's setting: a right answer from it is grounded in full
    assert docs.grounded(case, right, ["\n".join(LINES)]) == 1.0
