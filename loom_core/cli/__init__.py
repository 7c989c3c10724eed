"""``python -m loom_core``: the entry point (:mod:`loom_core.cli.entry`) and one module per
command. Nothing is imported here: the desktop app uses :mod:`loom_core.cli.help` for its
own arguments, and importing the whole command line with it cost its start-up 0.1-0.4 s."""
