"""Heal: try one repair per checkup finding, as forks, until a check passes (§10.2).

:mod:`.checks` turns ``--forbid`` / ``--require`` / ``--regex`` / ``--check`` into one
predicate over a run's final output; :mod:`.repairs` turns findings into candidate
edits, cheapest first; :mod:`.engine` runs them (concurrently, within a token
budget, cancellable) and marks the winner ``healed_by``. Import the submodules.
"""
