"""Forking a run from a model step (loom-format.md §10.3).

Model re-run mode: the context at the fork step is edited (:mod:`.edits`,
:mod:`.apply`) and resent to a provider turn by turn (:mod:`.rerun`), tool calls
answered from the parent's recording or paused for a person (:mod:`.resume`); the
branch is an ordinary loom trace with a ``fork`` provenance member (:mod:`.branch`).
:mod:`.plan` estimates a fork before anything is spent.

Import the submodules directly; this package keeps its import cheap.
"""
