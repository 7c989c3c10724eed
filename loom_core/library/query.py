"""The search language across runs: the step filter's, plus run keys, as one tree of terms.

Why the step filter's parser: a user who typed ``tool:bash "rm -rf" is:error`` in a run's
filter box types the same into the Runs page, and means the same. Its terms are parsed by
:func:`loom_core.views.filtering.parse_query`; this module adds the keys that only make
sense across runs -- ``model:NAME`` (a run that used that model), ``after:DATE`` and
``before:DATE`` (a run's time, ``2026-11-01`` or a full ISO time; a date is local
midnight) -- and turns the whole into one FTS5 expression plus run conditions.

What differs from the step filter, because an index answers it: text matches whole words
(``config`` finds ``config.yaml``; ``conf*`` asks for word beginnings, which costs more
on a big library: the index merges every word that starts so), punctuation only separates
words (``"rm -rf"`` is the phrase ``rm rf``), and ``tool:NAME`` also matches the
model step that called the tool (the step where its arguments are, and where a shield
decision about the call sits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase

from loom_core.views.filtering import parse_query
from loom_core.views.timeline import F_BLOCKED, F_DENIED, F_ERROR, F_SHIELD, KINDS

RUN_KEYS = ("model", "after", "before", "author", "host", "source")
SOURCES = ("found", "opened", "recorded", "forked", "healed", "published")
_TERM = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w")
_GLOB_WORDS = re.compile(r"[^\W_]+")
_WILD = re.compile(r"\[[^\]]*\]?|[*?]")


@dataclass(frozen=True)
class Atom:
    """One indexed term: ``text`` (a word or a phrase, as typed) in any of ``columns``,
    a word beginning when ``prefix``. Each backend tokenizes ``text`` its own way."""

    columns: tuple[str, ...]  # body, tool, agent, tags
    text: str
    prefix: bool = False


# A step matches when every clause matches; a clause when one of its alternatives does;
# an alternative when all its atoms do. Both backends compile this one tree: SQLite to an
# FTS5 MATCH expression (:func:`fts5_match`), PostgreSQL to a tsquery.
Alternative = tuple[Atom, ...]
Clause = tuple[Alternative, ...]


@dataclass
class SearchQuery:
    """A parsed search: the step terms as a tree of indexed terms, conditions for runs."""

    clauses: list[Clause] = field(default_factory=list)  # step terms ([]: none)
    models: list[str] = field(default_factory=list)  # the run used one of these (substring)
    authors: list[str] = field(default_factory=list)  # indexed or published by (substring)
    hosts: list[str] = field(default_factory=list)  # its file is on (substring)
    sources: list[str] = field(default_factory=list)  # how the library got it (SOURCES)
    after: float | None = None  # the run's time is at or after (unix seconds)
    before: float | None = None  # … and before
    tools: list[str] = field(default_factory=list)  # globs a hit's tool name must match
    agents: list[str] = field(default_factory=list)  # substrings a hit's agent must hold
    nothing: bool = False  # a term nothing can satisfy
    problems: list[str] = field(default_factory=list)

    @property
    def match(self) -> str:
        """The step terms as one FTS5 MATCH expression ("": no step term)."""
        return fts5_match(self.clauses)

    @property
    def empty(self) -> bool:
        keys = self.models or self.authors or self.hosts or self.sources
        return not (self.clauses or keys or self.after or self.before or self.nothing)

    def keeps(self, tool: str, agent: str) -> bool:
        """Whether a step the index matched passes the exact tool and agent tests."""
        names = tool.split()
        if self.tools and not any(fnmatchcase(n.lower(), t) for n in names for t in self.tools):
            return False
        return not self.agents or any(a in agent.lower() for a in self.agents)


def word_note(terms: str) -> str:
    """Why a tab's filter can show other steps than the search found ("" when its terms
    mean the same in both): the search's text terms match whole words of a step's text (``error`` is not in
    ``errors`` or ``AssertionError``, on both backends), while the tab's filter, given the
    same terms (``terms``: the search without its run keys), matches them anywhere in the
    step's recorded data, inside longer words and field names too."""
    texts = parse_query(terms).texts
    if not texts:
        return ""
    quoted = ", ".join(f"“{t}”" for t in texts)
    return (
        f"The library's search matched {quoted} as whole words; the tab's filter matches "
        f"{quoted} anywhere in a step's recorded text (inside longer words and field names "
        "too), so the steps it shows can differ from the search's hits (often more)."
    )


def fts_string(text: str) -> str:
    """``text`` as an FTS5 string (double quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def _date(q: SearchQuery, key: str, value: str) -> None:
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        q.problems.append(
            f"{key}: needs a date like 2026-11-01 (or 2026-11-01T09:30), not “{value}”"
        )
        q.nothing = True
        return
    setattr(q, key, when)


def _run_term(q: SearchQuery, key: str, value: str) -> None:
    if not value:
        q.problems.append(f"{key}: needs a value")
    elif key in ("model", "author", "host"):
        getattr(q, key + "s").append(value.lower())
    elif key == "source":
        if value.lower() in SOURCES:
            q.sources.append(value.lower())
        else:
            q.problems.append(f"source: is one of {', '.join(SOURCES)}, not “{value}”")
    else:
        _date(q, key, value)


def _split(text: str, q: SearchQuery) -> str:
    """Take the run keys out of ``text``; the rest, as the step filter will read it."""
    rest: list[str] = []
    for quoted, term in _TERM.findall(text):
        key, colon, value = term.partition(":")
        if term and colon and key.lower() in RUN_KEYS:
            _run_term(q, key.lower(), value)
        else:
            rest.append(fts_string(quoted) if not term else term)
    return " ".join(rest)


def _atom_fts(atom: Atom) -> str:
    return fts_string(atom.text) + ("*" if atom.prefix else "")


def _alternative_fts(alternative: Alternative) -> str:
    terms = [_atom_fts(a) for a in alternative]
    return terms[0] if len(terms) == 1 else f"({' AND '.join(terms)})"


def fts5_match(clauses: list[Clause]) -> str:
    """The step terms as an FTS5 MATCH expression over the ``step_fts`` columns. A clause's
    alternatives share their columns (one key each); text spans ``{body tool}``."""
    parts = []
    for clause in clauses:
        columns = clause[0][0].columns
        terms = [_alternative_fts(alt) for alt in clause]
        if len(columns) > 1:
            parts.append("{" + " ".join(columns) + "} : " + " OR ".join(terms))
        else:
            parts.append(f"{columns[0]} : ({' OR '.join(terms)})")
    return " AND ".join(parts)


def _any(column: str, words: list[str]) -> Clause:
    """One of ``words`` (whole words) in ``column``."""
    return tuple((Atom((column,), w),) for w in words)


def _glob_atoms(glob: str) -> list[Atom]:
    """Words every tool name matching ``glob`` holds (none: the index cannot narrow
    it, the names are checked one by one). A word of the glob that a wildcard does not
    touch is a whole word of the name (``*_file`` → ``file``), one a wildcard follows is
    a beginning (``read*`` → ``read…``), one a wildcard precedes could end a longer word
    and is left to the name check. The filter wraps a plain name in wildcards (``bash`` →
    ``*bash*``); that is matched as a word, which the index answers at once."""
    inner = glob.lower()
    if len(inner) > 2 and inner.startswith("*") and inner.endswith("*"):
        inner = inner[1:-1]
    pieces = _WILD.split(inner)
    atoms = []
    for k, part in enumerate(pieces):
        for word in _GLOB_WORDS.finditer(part):
            if word.start() == 0 and k > 0:
                continue  # a wildcard just before: the end of some longer word
            open_end = word.end() == len(part) and k < len(pieces) - 1
            atoms.append(Atom(("tool",), word.group(), open_end))
    return atoms


def _text_atom(needle: str) -> Atom | None:
    """A word or phrase; a trailing ``*`` asks for word beginnings (``conf*``)."""
    prefix = needle.endswith("*")
    words = needle.rstrip("*")
    return Atom(("body", "tool"), words, prefix) if _WORD.search(words) else None


def _tool_clause(q: SearchQuery, globs: list[str]) -> Clause:
    q.tools = [g.lower() for g in globs]
    alternatives = []
    for glob in globs:
        atoms = _glob_atoms(glob)
        if not atoms:  # ``tool:*`` or ``tool:*x``: every call and tool step, names checked
            return _any("tags", ["ktool", "kmodel"])
        alternatives.append(tuple(atoms))
    return tuple(alternatives)


def _flag_clauses(flags: int, subagent: bool) -> list[Clause]:
    """``is:`` terms: any of the flags (as in the step filter), and a sub-agent step."""
    words = ["ferror" if flags & F_ERROR else "fblocked" if flags & F_BLOCKED else ""]
    words.append("fdenied" if flags & F_DENIED and not flags & F_BLOCKED else "")
    words.append("fshield" if flags & F_SHIELD else "")
    chosen = [w for w in words if w]
    clauses = [_any("tags", chosen)] if chosen else []
    return clauses + ([_any("tags", ["fsubagent"])] if subagent else [])


def parse_search(text: str) -> SearchQuery:
    """Parse the search box's text (problems are collected, never raised)."""
    q = SearchQuery()
    step = parse_query(_split(text, q))
    q.problems += step.problems
    q.nothing = q.nothing or step.nothing
    if step.kinds:
        q.clauses.append(_any("tags", [f"k{KINDS[k]}" for k in sorted(step.kinds)]))
    if step.tools:
        q.clauses.append(_tool_clause(q, step.tools))
    if step.agents:
        q.agents = step.agents
        names = [a for a in step.agents if _WORD.search(a)]
        if len(names) == len(step.agents):
            q.clauses.append(_any("agent", names))
    q.clauses += _flag_clauses(step.flags, step.subagent)
    for needle in step.texts:
        atom = _text_atom(needle)
        if atom is not None:
            q.clauses.append(((atom,),))
    return q
