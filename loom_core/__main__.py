"""Entry point for ``python -m loom_core``."""

import sys

from .cli import main

sys.exit(main())
