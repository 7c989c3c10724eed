"""The story of the bundled sample trace, as data (played by :mod:`loom_core.demo.sample`).

A lead coding agent fixes a failing slugify test in a small repo, delegates a
review to a sub-agent, hits a native policy block and a shield deny, then
answers a follow-up question. Kept apart from the simulator so the simulator
stays short and the story can be edited without touching key computation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# 2026-07-14 09:41:12 UTC: the recorded `time` effect (the clock line says 09:41).
TIME_START = 1784022072.318604


@dataclass(frozen=True)
class Call:
    """A tool call; ``result`` may be an exception (recorded as ``ERROR: Class: msg``)."""

    tool: str
    input: dict[str, Any]
    result: Any = None  # None for policy-denied calls and delegations


@dataclass(frozen=True)
class Denied:
    """A call the shield removed from the response; only ``shield_events`` records it."""

    tool: str
    input: dict[str, Any]
    rule: str
    at: float  # seconds after TIME_START when the shield screened it


@dataclass(frozen=True)
class Turn:
    """One model response of ``agent``: text plus the calls that reached the agent."""

    agent: str
    text: str
    calls: tuple[Call, ...] = ()
    denied: Denied | None = None


@dataclass(frozen=True)
class Episode:
    """A user message to the lead agent."""

    text: str


@dataclass(frozen=True)
class AgentSpec:
    """An agent's name, system prompt and tools as (name, description, {param: type})."""

    name: str
    system: str
    tools: tuple[tuple[str, str, dict[str, str]], ...] = field(default_factory=tuple)


LEAD_SYSTEM = (
    "You are lead, a senior Python engineer working in the git repository at "
    "/workspace/textkit (a small text-utilities library used by the company blog).\n\n"
    "Work in small, verifiable steps: look at the layout, reproduce the problem, read "
    "before you edit, and run the relevant tests after every change. Before pushing, ask "
    "the reviewer agent to review your change and address blocking findings. Keep diffs "
    "minimal and match the existing style. Never rewrite git history and never delete "
    "files you did not create.\n\n"
    "When you finish, summarise what you changed and why in a few sentences, and say "
    "plainly if anything you were asked to do could not be done."
)
REVIEWER_SYSTEM = (
    "You are reviewer, a careful code reviewer for the textkit repository. You receive a "
    "description of a change. Read the changed files, run the tests, and reply with a "
    "short review: a verdict (APPROVE or REQUEST CHANGES) followed by concrete findings, "
    "most important first. You cannot modify files; do not speculate about code you "
    "have not read."
)

_READ = (
    "read_file",
    "Read a text file of the repository and return its contents.",
    {"path": "string"},
)
_TESTS = (
    "run_tests",
    "Run pytest on a test file or directory and return its output.",
    {"path": "string"},
)
REVIEWER = AgentSpec("reviewer", REVIEWER_SYSTEM, (_READ, _TESTS))
LEAD = AgentSpec(
    "lead",
    LEAD_SYSTEM,
    (
        (
            "list_files",
            "List the files under a directory of the repository, with sizes.",
            {"path": "string"},
        ),
        _READ,
        (
            "write_file",
            "Replace the contents of a file; returns the number of bytes written.",
            {"path": "string", "content": "string"},
        ),
        _TESTS,
        (
            "run_shell",
            "Run a shell command in the repository root; returns stdout and stderr.",
            {"command": "string"},
        ),
        (
            "git_push",
            "Commit the working tree and push it to a remote branch.",
            {"branch": "string"},
        ),
        (
            "reviewer",
            "Ask the reviewer agent to review a change. It reads files and runs "
            "tests, then replies with a verdict and findings.",
            {"task": "string"},
        ),
    ),
)
POLICY_DENY = ("git_push",)  # native loom.Policy(deny=[...]): tool names

# -- repository contents ------------------------------------------------------

_SLUGIFY_HEAD = '''"""URL slugs for post titles and headings."""

from __future__ import annotations

import re
'''
_SLUGIFY_TAIL = '''
_NON_WORD = re.compile(r"[^a-z0-9]+")
_MAX_LEN = 80


def _strip_accents(text: str) -> str:
{body}


def slugify(text: str, max_len: int = _MAX_LEN, sep: str = "-") -> str:
    """Lower-case ``text`` and join its words with ``sep``.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    text = _strip_accents(text).lower()
    slug = _NON_WORD.sub(sep, text).strip(sep)
    if len(slug) > max_len:
        slug = slug[:max_len].rstrip(sep)
    return slug
'''
SLUGIFY_OLD = _SLUGIFY_HEAD + _SLUGIFY_TAIL.format(
    body=(
        "    # Keep slugs URL-safe: drop everything outside ASCII.\n"
        '    return text.encode("ascii", errors="ignore").decode("ascii")'
    )
)
SLUGIFY_NEW = (
    _SLUGIFY_HEAD
    + "import unicodedata\n"
    + _SLUGIFY_TAIL.format(
        body=(
            "    # Decompose first so accented letters keep their base letter (\u00e9 -> e + U+0301),\n"
            "    # then drop what has no ASCII form (combining marks, CJK, emoji).\n"
            '    decomposed = unicodedata.normalize("NFKD", text)\n'
            '    return decomposed.encode("ascii", errors="ignore").decode("ascii")'
        )
    )
)

TEST_SLUGIFY = """import pytest

from textkit.slugify import slugify


def test_basic_title():
    assert slugify("Hello, World!") == "hello-world"


def test_collapses_runs_of_separators():
    assert slugify("a  --  b") == "a-b"


def test_strips_leading_and_trailing_separators():
    assert slugify("  --Release notes--  ") == "release-notes"


def test_custom_separator():
    assert slugify("Release Notes 2.0", sep="_") == "release_notes_2_0"


def test_digits_are_kept():
    assert slugify("Top 10 tips") == "top-10-tips"


def test_empty_string():
    assert slugify("") == ""


def test_only_punctuation():
    assert slugify("!!!") == ""


@pytest.mark.parametrize("max_len", [5, 12, 80])
def test_max_len_is_respected(max_len):
    slug = slugify("the quick brown fox jumps over the lazy dog", max_len=max_len)
    assert len(slug) <= max_len
    assert not slug.endswith("-")


def test_unicode_is_transliterated():
    assert slugify("Cr\u00e8me Br\u00fbl\u00e9e") == "creme-brulee"


def test_unicode_letters_without_ascii_form_are_dropped():
    assert slugify("\u6771\u4eac tower") == "tower"
"""


_SIZES = (
    (".github/workflows/ci.yml", 612),
    ("CHANGELOG.md", 1893),
    ("README.md", 1207),
    ("pyproject.toml", 684),
    ("textkit/__init__.py", 143),
    ("textkit/slugify.py", len(SLUGIFY_OLD.encode())),
    ("textkit/truncate.py", 1488),
    ("textkit/wrap.py", 2054),
    ("tests/conftest.py", 211),
    ("tests/test_slugify.py", len(TEST_SLUGIFY.encode())),
    ("tests/test_truncate.py", 1731),
    ("tests/test_wrap.py", 2215),
)
LISTING = "\n".join(f"{size:>7}  {path}" for path, size in _SIZES) + f"\n{len(_SIZES)} files"


def _bar(title: str) -> str:
    return f" {title} ".center(80, "=")


def _progress(path: str, dots: str, percent: int) -> str:
    left = f"{path} {dots}"
    return left + f"[{percent:>3}%]".rjust(80 - len(left))


_SESSION = "\n".join(
    (
        _bar("test session starts"),
        "platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /workspace/textkit",
        "configfile: pyproject.toml",
    )
)
PYTEST_FAIL = "\n".join(
    (
        _SESSION,
        "collected 12 items",
        "",
        _progress("tests/test_slugify.py", "..........F.", 100),
        "",
        _bar("FAILURES"),
        _bar("test_unicode_is_transliterated").replace("=", "_"),
        "",
        "    def test_unicode_is_transliterated():",
        '>       assert slugify("Cr\u00e8me Br\u00fbl\u00e9e") == "creme-brulee"',
        "E       AssertionError: assert 'crme-brle' == 'creme-brulee'",
        "E         ",
        "E         - creme-brulee",
        "E         ?   -     -  -",
        "E         + crme-brle",
        "",
        "tests/test_slugify.py:42: AssertionError",
        _bar("short test summary info"),
        "FAILED tests/test_slugify.py::test_unicode_is_transliterated - AssertionError: "
        "assert 'crme-brle' == 'creme-brulee'",
        _bar("1 failed, 11 passed in 0.05s"),
    )
)


def pytest_pass(seconds: str) -> str:
    """Output of the whole suite passing (the fix is in)."""
    return "\n".join(
        (
            _SESSION,
            "collected 28 items",
            "",
            _progress("tests/test_slugify.py", "............", 42),
            _progress("tests/test_truncate.py", ".......", 67),
            _progress("tests/test_wrap.py", ".........", 100),
            "",
            _bar(f"28 passed in {seconds}s"),
        )
    )


GIT_LOG = """9d2f6a1 Add transliteration test for accented titles (#142)
5be07c3 slugify: make the separator configurable (#131)
e41a9f0 slugify: cap slugs at 80 characters (#118)
a71f0b3 Import slugify from the blog generator"""
GIT_SHOW = """commit 9d2f6a1c0e5b7d3a48f2e9b61c7d04a5f3e8b921
Author: Priya Raman <priya@textkit.dev>
Date:   Sun Jul 12 16:05:41 2026 +0200

    Add transliteration test for accented titles (#142)

    The blog now gets French and German post titles, and #139 reported
    slugs like "crme-brle". This pins the expected behaviour; the fix
    itself is tracked in #139.

 tests/test_slugify.py | 8 ++++++++
 1 file changed, 8 insertions(+)"""

# -- the run --------------------------------------------------------------------

_TASK = (
    "Please review my fix for the failing test_unicode_is_transliterated. In "
    "textkit/slugify.py, _strip_accents now NFKD-normalises the text before the "
    "ASCII encode, so accented letters keep their base letter instead of being "
    "dropped. Check the change and that the whole suite passes."
)
_NOTICE_CMD = {"command": "rm -rf .pytest_cache textkit/__pycache__ tests/__pycache__"}

STEPS: tuple[Episode | Turn, ...] = (
    Episode(
        "CI for textkit is red: tests/test_slugify.py::test_unicode_is_transliterated "
        "fails on main. Find the cause, fix it, make sure the whole suite passes, and "
        "push the fix to a branch named fix/slugify-unicode."
    ),
    Turn(
        "lead",
        "I'll start with the repository layout.",
        (Call("list_files", {"path": "."}, LISTING),),
    ),
    Turn(
        "lead",
        "Let me reproduce the failure first.",
        (
            Call(
                "run_tests",
                {"path": "tests/test_slug.py"},
                FileNotFoundError("file or directory not found: tests/test_slug.py"),
            ),
        ),
    ),
    Turn(
        "lead",
        "The module is tests/test_slugify.py, not test_slug.py. Running that.",
        (Call("run_tests", {"path": "tests/test_slugify.py"}, PYTEST_FAIL),),
    ),
    Turn(
        "lead",
        "Accented letters are dropped instead of transliterated: 'Cr\u00e8me' "
        "becomes 'crme'. Let me read the implementation and the test.",
        (
            Call("read_file", {"path": "textkit/slugify.py"}, SLUGIFY_OLD),
            Call("read_file", {"path": "tests/test_slugify.py"}, TEST_SLUGIFY),
        ),
    ),
    Turn(
        "lead",
        "Found it: _strip_accents encodes to ASCII with errors='ignore' without "
        "decomposing first, so '\u00e8' is discarded whole rather than reduced to 'e'. "
        "Normalising to NFKD first splits it into 'e' plus a combining accent, and only "
        "the accent is dropped. CJK still has no ASCII form, so the other Unicode test "
        "keeps passing.",
        (
            Call(
                "write_file",
                {"path": "textkit/slugify.py", "content": SLUGIFY_NEW},
                f"Wrote {len(SLUGIFY_NEW.encode())} bytes to textkit/slugify.py",
            ),
        ),
    ),
    Turn(
        "lead",
        "Stale bytecode could mask the change, so I'll clear the caches and run the whole suite.",
        (Call("run_tests", {"path": "tests"}, pytest_pass("0.09")),),
        denied=Denied("run_shell", _NOTICE_CMD, "run_shell(*rm -rf*)", 58.734),
    ),
    Turn(
        "lead",
        "All 28 tests pass (clearing the caches was blocked by policy, but pytest "
        "re-imports the changed module anyway). Asking the reviewer before I push.",
        (Call("reviewer", {"task": _TASK}),),
    ),
    Turn(
        "reviewer",
        "I'll read the changed module first.",
        (Call("read_file", {"path": "textkit/slugify.py"}, SLUGIFY_NEW),),
    ),
    Turn(
        "reviewer",
        "The change is small and local. Running the whole suite.",
        (Call("run_tests", {"path": "tests"}, pytest_pass("0.08")),),
    ),
    Turn(
        "reviewer",
        "APPROVE.\n\n1. NFKD followed by an ASCII encode with errors='ignore' "
        "is the standard way to transliterate Latin accents; the change is minimal and "
        "matches the module's style.\n2. All 28 tests pass, including both Unicode "
        "tests.\n3. Non-blocking: letters that do not decompose (\u00df, \u00f8, \u0142) "
        "are still dropped, e.g. 'Stra\u00dfe' -> 'strae'. Worth a follow-up issue with "
        "an explicit mapping table.",
    ),
    Turn(
        "lead",
        "The reviewer approved. Pushing to fix/slugify-unicode.",
        (Call("git_push", {"branch": "fix/slugify-unicode"}),),
    ),
    Turn(
        "lead",
        "Fixed, but not pushed.\n\n- Cause: _strip_accents in textkit/slugify.py "
        "dropped every non-ASCII character, so 'Cr\u00e8me Br\u00fbl\u00e9e' became "
        "'crme-brle'.\n- Fix: normalise to NFKD before the ASCII encode, so accented "
        "letters keep their base letter (one import, two lines).\n- Tests: all 28 pass; "
        "the reviewer approved, noting that \u00df/\u00f8/\u0142 are still dropped "
        "(follow-up suggested).\n\nI could not push to fix/slugify-unicode: git_push is "
        "denied by policy in this environment. The change is in the working tree; please "
        "push it yourself or allow git_push. A request to clear the pytest caches was "
        "also blocked by the shield; it was not needed.",
    ),
    Episode("Thanks. Why did this only start failing now? Did something change in CI?"),
    Turn(
        "lead",
        "Let me look at the recent history of the module and its test.",
        (
            Call(
                "run_shell",
                {"command": "git log --oneline -4 -- textkit/slugify.py tests/test_slugify.py"},
                GIT_LOG,
            ),
        ),
    ),
    Turn(
        "lead",
        "The newest commit only touches the test. Let me look at it.",
        (Call("run_shell", {"command": "git show --stat 9d2f6a1"}, GIT_SHOW),),
    ),
    Turn(
        "lead",
        "Nothing changed in CI. The bug has been there since slugify was imported "
        "(a71f0b3): it always dropped non-ASCII letters. What changed is the test suite: "
        "9d2f6a1 (#142, Priya Raman, Sunday) added test_unicode_is_transliterated to pin "
        "the behaviour reported in #139, while the fix itself was still open, so main "
        "went red from that commit on. My change is that fix; once it is pushed, mention "
        "#139 in the PR so it closes the issue.",
    ),
)
