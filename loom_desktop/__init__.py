"""loom_desktop: the PySide6 + pyqtgraph face of Loom Desktop.

The only package that imports Qt; everything it shows comes from loom_core.
"""

import os

# pyqtgraph picks a binding by what is importable; pin ours before anyone imports it.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

__version__ = "0.1.0"
