"""``python -m loom_core export-html RUN -o PAGE.html [--scrub] [--force]``: a run as one page.

Bad input (an unreadable run, an existing output without ``--force``, an unwritable folder)
exits 2 with one line on stderr, through the shared CLI handler.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_export_command(sub: Any) -> None:
    p = sub.add_parser(
        "export-html",
        help="write a run as one self-contained HTML page (opens in any browser, offline)",
    )
    p.add_argument("path", help="any run the app opens (trace, journal, wirelog, foreign)")
    p.add_argument("-o", "--output", required=True, help="the page to write (.html)")
    p.add_argument("--scrub", action="store_true", help="replace secret-shaped strings")
    p.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    p.set_defaults(func=cmd_export_html)


def cmd_export_html(args: argparse.Namespace) -> int:
    from loom_core.errors import LoadError
    from loom_core.export.html import write_page
    from loom_core.formats.loader import load
    from loom_core.runs_dir import refuse_overwrite

    refuse_overwrite(args.output, args.force)
    doc = load(args.path)
    try:
        size = write_page(doc, args.output, scrub=args.scrub)
    except OSError as err:
        raise LoadError(args.output, f"cannot write: {err.strerror or err}") from err
    scrubbed = ", scrubbed" if args.scrub else ""
    print(
        f"wrote {args.output}: {len(doc.effects)} effect(s), {size:,} bytes{scrubbed}",
        file=sys.stderr,
    )
    return 0
