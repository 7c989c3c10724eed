"""A live Claude Code session's fold resumed line by line gives a fresh open's run.

Made-up sessions with what changes earlier steps (rewinds to any earlier answer, parallel
tool calls whose lines interleave with their results, results hanging from either
line) are fed a line at a time, and after each line the resumed run must be the run a
fresh open of the same bytes gives; the rewound branches kept up to date must be the
whole walk's.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom_core.formats.claude_branches import abandoned
from loom_core.formats.claude_code import load_claude_code
from loom_core.formats.claude_resume import ResumedLines
from loom_core.formats.claude_rewinds import Rewinds
from tests.core.formats.claude_fixtures import Session, text, tool_use
from tests.core.live.test_appended import facts

_STEPS = st.lists(
    st.sampled_from(["prompt", "answer", "tools", "tools-split", "rewind"]), min_size=1, max_size=10
)


def _session(steps: list[str], pick: int) -> Session:
    s = Session()
    answers: list[str] = []
    for n, step in enumerate(steps):
        if step == "rewind" and answers:
            s.parent = answers[pick % len(answers)]
            s.prompt(f"again {n}")
        elif step == "prompt":
            s.prompt(f"ask {n}")
        elif step.startswith("tools"):
            lines = s.reply([tool_use(f"a{n}", "Bash", command="1"), tool_use(f"b{n}", "Read")])
            if step == "tools-split":  # each result hangs from its own call's line
                s.parent = lines[0]["uuid"]
            s.result(f"a{n}", "one")
            if step == "tools-split":
                s.parent = lines[1]["uuid"]
            s.result(f"b{n}", "two")
        else:
            answers.append(s.reply([text(f"answer {n}")])[-1]["uuid"])
    return s


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_STEPS, pick=st.integers(0, 5))
def test_each_line_resumed_is_a_fresh_open(steps: list[str], pick: int) -> None:
    lines = _session(steps, pick).data().splitlines(keepends=True)
    parser, rewinds = ResumedLines(), Rewinds()
    for n, line in enumerate(lines, 1):
        parser.add(line)
        written = b"".join(lines[:n])
        assert facts(parser.document("/nowhere/s.jsonl", b"")) == facts(
            load_claude_code(written, "/nowhere/s.jsonl")
        )
        recs = [rec for _n, rec in parser._lines.records]
        assert rewinds.update(recs) == abandoned(recs)


def test_a_rewind_in_a_long_session_is_seen() -> None:
    """Many turns, then a rewind to the first answer: the steps after it go, as in a
    fresh open, and the walk was done whole only when the rewind came."""
    steps = ["prompt", "answer"] + ["prompt", "tools", "answer"] * 6 + ["rewind", "answer"]
    lines = _session(steps, 0).data().splitlines(keepends=True)
    parser, rewinds = ResumedLines(), Rewinds()
    for line in lines:
        parser.add(line)
        rewinds.update([rec for _n, rec in parser._lines.records])
    doc = parser.document("/nowhere/s.jsonl", b"")
    assert facts(doc) == facts(load_claude_code(b"".join(lines), "/nowhere/s.jsonl"))
    assert "rewound branch" in doc.warnings[0]
    assert rewinds.asked == 2  # the first line's read, the rewind's
