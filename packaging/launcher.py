"""Entry script of the frozen app: PyInstaller starts a script, not ``python -m``."""

import sys

from loom_desktop.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
