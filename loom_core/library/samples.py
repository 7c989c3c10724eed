"""What the library indexes of one file: its run, or every sample of an Inspect AI log.

Why every sample: an ``.eval`` log holds one run per sample and epoch, and the app opens
its first; a search must still find text that only a later sample holds. The log stays
one run of the library (one row per file: the Runs page lists files, and the sample bar
of the tab that opens it offers the samples); each step's index row carries its sample
(``ID:EPOCH``), so a hit names it and opens there.

The log's row sums its samples: ``steps``, ``tokens`` and ``errors`` are totals over all
samples (what the Runs page's Steps/Tokens/Errors columns say of the file), ``cost`` the
total, unknown (None) when any sample's is; ``models`` the union; ``title`` and
``started`` the first sample's; how it ended (:func:`~loom_core.library.ending.merged_facts`):
failed when a sample failed, stopped when one hit a limit, finished when every one answered.
The zip is read once and each sample's member once (:func:`inspect_eval.each_sample`);
one sample's document is in memory at a time.
"""

from __future__ import annotations

from pathlib import Path

from loom_core.formats import inspect_eval
from loom_core.formats.foreign import reader_for
from loom_core.formats.loader import load_bytes, read_bytes
from loom_core.library.ending import merged_facts
from loom_core.library.extract import RunFacts, StepText, run_facts, step_texts


def file_run(path: str | Path) -> tuple[RunFacts, list[StepText]]:
    """The facts and the step rows of the file at ``path`` (LoadError when it does not load)."""
    data, name = read_bytes(path), str(path)
    if reader_for(data, name) is not inspect_eval.READER:
        doc = load_bytes(data, name)
        rows = step_texts(doc)
        return run_facts(doc, rows), rows
    facts: list[RunFacts] = []
    rows = []
    for doc in inspect_eval.each_sample(data, name):
        sample = doc.extra.get("sample") or {}
        spec = f"{sample.get('id')}:{sample.get('epoch')}"
        mine = step_texts(doc)
        for row in mine:
            row.sample = spec
        facts.append(run_facts(doc, mine))
        rows += mine
    return merged(facts), rows


def merged(facts: list[RunFacts]) -> RunFacts:
    """One row for a log of several samples (see the module docstring for each field)."""
    first = facts[0]
    costs = [f.cost for f in facts]
    return RunFacts(
        format=first.format,
        title=first.title,
        models=list(dict.fromkeys(m for f in facts for m in f.models)),
        steps=sum(f.steps for f in facts),
        tokens_in=sum(f.tokens_in for f in facts),
        tokens_out=sum(f.tokens_out for f in facts),
        cost=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        errors=sum(f.errors for f in facts),
        ending=merged_facts([f.ending for f in facts]),
        started=first.started,
    )
