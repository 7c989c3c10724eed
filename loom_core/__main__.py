"""Entry point for ``python -m loom_core``."""

import gc
import sys

from loom_core.cli.entry import main

code = main()
if sys.argv[1:2] in (["summary"], ["checksum"]):
    # These only print, and the process ends here: the interpreter's last collection over
    # every object the run left (schema, price tables) was most of the exit time (0.07 s
    # after a 100 MB trace's summary) and frees nothing the OS would not reclaim anyway.
    gc.freeze()
sys.exit(code)
