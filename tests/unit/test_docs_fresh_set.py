"""The held-out how-to sets written for `rat eval` (php-01..20 over PHP's php.ini,
login-01..20 over shadow's login.defs): each loads as `rat eval --benchmark NAME` finds it,
every key's setting is on the line of the file cited for it, and the scorer gives a right
answer all its keys and a wrong one fewer."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rat_agent.eval import docs
from rat_agent.eval.runner import Case

# Hand-written answers: one naming every key, one that misses or gets a value wrong.
PHP = {
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

LOGIN = {
    "login-01": (
        "In /etc/login.defs:\n```\nPASS_MAX_DAYS   90\nPASS_WARN_AGE   14\n```",
        "PASS_MAX_DAYS 90\nPASS_WARN_AGE 7",
    ),
    "login-02": ("Set PASS_MIN_DAYS to 1 in /etc/login.defs.", "PASS_MIN_DAYS 10"),
    "login-03": ("HOME_MODE 0750", "UMASK 027"),
    "login-04": ("UMASK\t\t027", "UMASK 0277"),
    "login-05": ("UID_MIN 5000\nGID_MIN 5000", "SYS_UID_MIN 5000\nSUB_GID_MIN 5000"),
    "login-06": ("SYS_UID_MIN 200\nSYS_UID_MAX 499", "SYS_UID_MIN 2000\nSYS_UID_MAX 499"),
    "login-07": (
        "ENCRYPT_METHOD YESCRYPT\nYESCRYPT_COST_FACTOR 8",
        "ENCRYPT_METHOD YESCRYPT\nYESCRYPT_COST_FACTOR 18",
    ),
    "login-08": (
        "SHA_CRYPT_MIN_ROUNDS 500000\nSHA_CRYPT_MAX_ROUNDS 1000000",
        "SHA_CRYPT_MIN_ROUNDS 5000\nSHA_CRYPT_MAX_ROUNDS 1000000",
    ),
    "login-09": ("LOG_OK_LOGINS yes", "FAILLOG_ENAB yes"),
    "login-10": (
        "SULOG_FILE /var/log/su-activity.log",
        "SULOG_FILE /var/log/su-activity.log.1",
    ),
    "login-11": ("LOGIN_RETRIES 3\nLOGIN_TIMEOUT 30", "LOGIN_RETRIES 3\nLOGIN_TIMEOUT 300"),
    "login-12": ("CHFN_RESTRICT wf", "CHFN_RESTRICT fwh"),
    "login-13": ("DEFAULT_HOME no", "DEFAULT_HOME yes"),
    "login-14": (
        "USERDEL_CMD /usr/local/sbin/cleanup-user",
        "USERDEL_CMD /usr/local/sbin/cleanup-users",
    ),
    "login-15": ("MAIL_DIR /var/spool/mail", "MAIL_FILE /var/spool/mail"),
    "login-16": ("USERGROUPS_ENAB no", "USERGROUPS_ENAB yes"),
    "login-17": (
        "SUB_UID_COUNT 200000\nSUB_GID_COUNT 200000",
        "SUB_UID_COUNT 200000\nSUB_GID_COUNT 65536",
    ),
    "login-18": ("PREVENT_NO_AUTH yes", "PREVENT_NO_AUTH superuser"),
    "login-19": ("LOG_UNKFAIL_ENAB yes", "FAILLOG_ENAB yes"),
    "login-20": ("TTYGROUP tty\nTTYPERM 0620", "TTYPERM 06200"),
}

# name: (hand-written answers, how its license file opens)
SETS = {"php": (PHP, "php.ini: "), "login": (LOGIN, "login.defs: ")}
QUESTIONS = [(name, q) for name in SETS for q in docs.load_questions(docs.SETS[name])]
IDS = [str(q["id"]) for _, q in QUESTIONS]


def _setting(key: docs.Key) -> str:
    return re.split(r"[\s=]", key if isinstance(key, str) else key[0], maxsplit=1)[0]


def _case(name: str, question_id: str) -> Case:
    return next(c for c in docs.cases(docset=docs.SETS[name]) if c.id == question_id)


@pytest.mark.parametrize("name", SETS)
def test_the_set_loads_as_rat_eval_finds_it(name: str) -> None:
    docset = docs.SETS[name]
    document = docset.document.name
    assert docset == docs.read_set(docs.FOLDER / f"{name}_questions.json")
    assert docset.title == f"How-to questions over {document} (held out)"
    assert docset.collection == f"{name}-docs"
    answers, license_opens = SETS[name]
    assert (docs.FOLDER / f"LICENSE.{name}").read_text().startswith(license_opens)
    questions = docs.load_questions(docset)
    assert [q["id"] for q in questions] == [f"{name}-{n:02d}" for n in range(1, 21)]
    assert {q["split"] for q in questions} == {"test"} and docs.cases("tune", docset=docset) == []
    assert sorted(answers) == [q["id"] for q in questions]


@pytest.mark.parametrize(("name", "question"), QUESTIONS, ids=IDS)
def test_every_key_is_a_setting_on_its_cited_line_and_not_the_files_own_value(
    name: str, question: dict[str, Any]
) -> None:
    lines = docs.SETS[name].document.read_text().splitlines()
    keys, cited = question["keys"], question["lines"]
    assert isinstance(keys, list) and isinstance(cited, list) and len(keys) == len(cited)
    assert 1 <= len(keys) <= 3
    for key, line in zip(keys, cited, strict=True):
        setting = _setting(key)
        options = [key] if isinstance(key, str) else key
        assert all(_setting(option) == setting for option in options)
        # a setting written at the start of its line, commented out ("#" or ";") or not
        written = lines[line - 1].lstrip("#; ")
        assert re.match(rf"{re.escape(setting)}(\s|=)", written), (setting, line, written)
        assert setting not in str(question["question"])  # the user's words, not its name
        assert not docs.named(key, written)  # the file's own value is not the answer


@pytest.mark.parametrize(("name", "question"), QUESTIONS, ids=IDS)
def test_an_answer_naming_every_key_scores_one_and_one_missing_a_key_less(
    name: str, question: dict[str, Any]
) -> None:
    case = _case(name, str(question["id"]))
    keys = question["keys"]
    canonical = [k if isinstance(k, str) else k[0] for k in keys]
    assert docs.score(case, "\n".join(canonical)).score == 1.0
    for left_out in range(len(canonical)):
        rest = canonical[:left_out] + canonical[left_out + 1 :]
        assert docs.score(case, "\n".join(rest)).score == (len(keys) - 1) / len(keys)
    right, wrong = SETS[name][0][case.id]
    assert docs.score(case, right).score == 1.0
    assert docs.score(case, wrong).score < 1.0
    # cited, the file gives every key's setting: a right answer from it is grounded in full
    assert docs.grounded(case, right, [docs.SETS[name].document.read_text()]) == 1.0
