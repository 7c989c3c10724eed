"""The check a healed run must pass, built from the command line or the heal dialog.

Why one object: the same check judges the parent (a run that already passes is
returned as is) and every candidate branch, and its ``label`` is shown beside
the result so the user can see what "passes" meant.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

Predicate = Callable[[str], bool]


class CheckError(ValueError):
    """The check itself is broken (bad regex, module not found, not callable).

    Why two wordings: ``str()`` names the command-line option (``--regex '(': …``) for
    the CLI; :attr:`plain` says the same without flags, for the heal dialog, whose
    fields are not options.
    """

    def __init__(self, flag: str, cause: str, plain: str) -> None:
        super().__init__(f"{flag} {cause}" if flag else cause)
        self.plain = plain


@dataclass
class Check:
    """All parts must pass; an empty check is refused (it would pass anything)."""

    parts: list[tuple[str, Predicate]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return " and ".join(name for name, _ in self.parts)

    def __call__(self, output: str) -> bool:
        return all(_safe(pred, output) for _, pred in self.parts)

    def forbid(self, text: str) -> Check:
        self.parts.append((f"output lacks {text!r}", lambda out: text not in out))
        return self

    def require(self, text: str) -> Check:
        self.parts.append((f"output contains {text!r}", lambda out: text in out))
        return self

    def regex(self, pattern: str) -> Check:
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise CheckError(
                "--regex",
                f"{pattern!r}: {err}",
                f"the regular expression {pattern!r} is not valid: {err}",
            ) from err
        self.parts.append(
            (f"output matches /{pattern}/", lambda out: compiled.search(out) is not None)
        )
        return self

    def function(self, spec: str) -> Check:
        self.parts.append((f"{spec}(output)", load_function(spec)))
        return self


def _safe(pred: Predicate, output: str) -> bool:
    """A user check that raises fails the candidate; it must not end the heal."""
    try:
        return bool(pred(output))
    except Exception:  # noqa: BLE001 - the user's code may raise anything
        return False


def load_function(spec: str) -> Predicate:
    """``module:function`` (the current directory importable, as ``python -m`` does)."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise _function_error(
            spec, "expected MODULE:FUNCTION", "write it as module:function, e.g. mychecks:is_good"
        )
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        func = getattr(importlib.import_module(module), name)
    except ImportError as err:
        raise _function_error(
            spec, f"cannot import {module}: {err}", f"cannot import {module}: {err}"
        ) from err
    except AttributeError as err:
        raise _function_error(spec, f"{module} has no {name}", f"{module} has no {name}") from err
    if not callable(func):
        raise _function_error(spec, f"{name} is not callable", f"{name} is not a function")
    return cast(Predicate, func)  # the user's function: only its callability can be checked


def _function_error(spec: str, cause: str, plain: str) -> CheckError:
    return CheckError("--check", f"{spec!r}: {cause}", f"the function {spec!r}: {plain}")


def build_check(
    forbid: Sequence[str] = (),
    require: Sequence[str] = (),
    regex: Sequence[str] = (),
    functions: Sequence[str] = (),
) -> Check:
    check = Check()
    for text in forbid:
        check.forbid(text)
    for text in require:
        check.require(text)
    for pattern in regex:
        check.regex(pattern)
    for spec in functions:
        check.function(spec)
    if not check.parts:
        raise CheckError(
            "",
            "a check is needed: --forbid, --require, --regex or --check",
            "a check is needed: fill in at least one of the fields above",
        )
    return check
