"""Objects the user names by import path, `package.module:attribute` (models, retrievers)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from rat_agent.errors import ConfigError
from rat_agent.served import current_user


def include_working_folder() -> None:
    """Make modules in the current folder importable, as `python -m` does and the `rat`
    script does not: `--retriever my_kb:retriever` next to my_kb.py. Appended, not
    prepended, so a file here never shadows an installed package."""
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def limited() -> bool:
    """Whether the modules a user may name are limited: `RAT_IMPORTS` is set, or this is a
    served user's run."""
    return os.environ.get("RAT_IMPORTS") is not None or bool(current_user())


def allowed(module_name: str) -> bool:
    """Whether a user may name objects in `module_name`. `RAT_IMPORTS` (comma-separated
    modules or packages) limits it: a server's users name import paths in their runs'
    context, and loading one runs its code. Set, only those; set but empty, none. Unset,
    any module on one's own machine, and none in a served user's run."""
    if not limited():
        return True
    listed = os.environ.get("RAT_IMPORTS") or ""
    prefixes = [p.strip() for p in listed.split(",") if p.strip()]
    return any(module_name == p or module_name.startswith(p + ".") for p in prefixes)


def check_allowed(path: str, what: str) -> None:
    """ConfigError unless a user may name `path`: checked before anything is looked up by
    that name, so a module outside the list is never imported or searched. A listed
    module offers its public top-level objects: a private name, or one reached through
    another object (`fn.__globals__.clear`, `shared_list.clear`), could change or stop
    the process that runs every user's runs."""
    module_name, _, attribute = path.partition(":")
    if not allowed(module_name):
        raise ConfigError(
            f"{what} {path!r}: this server loads no module outside RAT_IMPORTS "
            f"({os.environ.get('RAT_IMPORTS') or 'none'})"
        )
    parts = attribute.split(".")
    if any(part.startswith("_") for part in parts):
        raise ConfigError(f"{what} {path!r}: names starting with '_' are private to their module")
    if limited() and len(parts) > 1:
        raise ConfigError(
            f"{what} {path!r}: name an object of the module itself (module:name), "
            "not one inside another"
        )


def load(path: str, kind: type[Any], what: str, *, builtin: bool = False, **kwargs: Any) -> Any:
    """The `kind` instance at `path`, or the one a function (or class) there returns.

    Of `kwargs`, the callable is given those its signature names. A `builtin` path is
    rat-agent's own and never limited by `RAT_IMPORTS`. A module that exits while it is
    imported or built is a ConfigError, not the end of the process.
    """
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{what} {path!r}: write it as 'package.module:attribute'")
    if not builtin:
        check_allowed(path, what)
    include_working_folder()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what} {path!r}: cannot import {module_name!r}: {exc}") from None
    except (Exception, SystemExit) as exc:
        raise ConfigError(
            f"{what} {path!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(
                f"{what} {path!r}: {module_name!r} has no attribute {attribute!r}"
            ) from None
    if isinstance(target, kind):
        return target
    if not builtin and limited() and getattr(target, "__module__", None) != module_name:
        # what the module imports is not what it offers (`from os import system`)
        raise ConfigError(f"{what} {path!r}: {module_name!r} does not define {attribute!r}")
    if not callable(target):
        raise ConfigError(
            f"{what} {path!r} is a {type(target).__name__}, "
            f"not a {kind.__name__} or a function returning one"
        )
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):  # some builtins have no signature
        parameters = {}  # type: ignore[assignment]
    given = {name: value for name, value in kwargs.items() if name in parameters}
    try:
        made = target(**given)
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"{what} {path!r} failed to build: {type(exc).__name__}: {exc}") from exc
    if not isinstance(made, kind):
        raise ConfigError(
            f"{what} {path!r} returned a {type(made).__name__}, not a {kind.__name__}"
        )
    return made
