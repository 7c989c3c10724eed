"""Entry point for ``python -m loom_core``."""

import gc
import sys

try:
    from loom_core.cli.entry import main

    code = main()  # commands import their dependencies when they run
except ModuleNotFoundError as error:  # the shell's Python, not the venv's: say which to use
    from loom_core.cli.outside_venv import explain

    sys.exit(explain(error, "loom_core"))
if sys.argv[1:2] in (["summary"], ["checksum"]):
    # These only print, and the process ends here: the interpreter's last collection over
    # every object the run left (schema, price tables) was most of the exit time (0.07 s
    # after a 100 MB trace's summary) and frees nothing the OS would not reclaim anyway.
    gc.freeze()
sys.exit(code)
