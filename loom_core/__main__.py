"""Entry point for ``python -m loom_core``."""

import sys

from loom_core.cli.entry import main

sys.exit(main())
