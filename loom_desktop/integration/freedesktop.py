"""The freedesktop.org files, as text: desktop entry, shared-mime-info package, mimeapps.list.

Pure functions of :mod:`.description` so the installer, ``packaging/linux`` and the
tests all see the same bytes. The ``Exec`` quoting follows the Desktop Entry
Specification ("The Exec key"): an argument with a reserved character is put in
double quotes with ``"`` `` ` `` ``$`` ``\\`` backslash-escaped, then the whole
value gets the string-level escaping, so a literal backslash ends up as four.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from loom_desktop.integration.description import AppInfo

RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def string_escape(value: str) -> str:
    """The escaping every desktop-entry string value gets."""
    return (
        value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    )


def string_unescape(value: str) -> str:
    """Undo :func:`string_escape` (and ``\\s``, the spec's escaped space)."""
    codes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    out, chars = [], iter(value)
    for c in chars:
        out.append(codes.get(next(chars, ""), "") if c == "\\" else c)
    return "".join(out)


def exec_quote(arg: str) -> str:
    """One argument, quoted for an ``Exec`` line (field-code percent signs doubled)."""
    arg = arg.replace("%", "%%")
    if not arg or RESERVED & set(arg):
        arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    return string_escape(arg)  # the string-level escape, applied on top


def exec_line(argv: list[str], field_code: str = "%F") -> str:
    return " ".join(exec_quote(a) for a in argv) + f" {field_code}"


def split_exec(value: str) -> list[str]:
    """Words of an (already string-unescaped) ``Exec`` value, honouring its double quotes."""
    words: list[str] = []
    word: list[str] | None = None
    quoted = False
    chars = iter(value)
    for c in chars:
        if quoted:
            if c == '"':
                quoted = False
            else:
                word.append(next(chars, "") if c == "\\" else c)  # type: ignore[union-attr]
        elif c in " \t\n":
            if word is not None:
                words.append("".join(word))
            word = None
        else:
            word = word if word is not None else []
            quoted = c == '"'
            if not quoted:
                word.append(c)
    if word is not None:
        words.append("".join(word))
    return words


def parse_exec(value: str, files: list[str]) -> list[str]:
    """What a launcher runs for ``value`` with ``files`` (``%F``/``%f``/``%U``/``%u`` expanded)."""
    argv: list[str] = []
    for word in split_exec(string_unescape(value)):
        if word in ("%F", "%U"):
            argv.extend(files)
        elif word in ("%f", "%u"):
            argv.extend(files[:1])
        else:
            argv.append(word.replace("%%", "%"))
    return argv


def desktop_entry(app: AppInfo, argv: list[str]) -> str:
    """The ``.desktop`` file that launches ``argv`` with the files to open appended."""
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.0",
        f"Name={app.name}",
        f"GenericName={app.generic_name}",
        f"Comment={app.comment}",
        f"Icon={app.app_id}",
        f"TryExec={string_escape(argv[0])}",  # a plain path: no Exec quoting
        f"Exec={exec_line(argv)}",
        "Terminal=false",
        "Categories=" + "".join(f"{c};" for c in app.categories),
        "Keywords=" + "".join(f"{k};" for k in app.keywords),
        "MimeType=" + "".join(f"{t.mime_type};" for t in app.file_types),
        # X11 matches windows to this entry by WM_CLASS; the app sets its instance
        # name and desktopFileName to the same id (see loom_desktop/app.py).
        f"StartupWMClass={app.app_id}",
        # A second launch hands its files over and shows no window of its own,
        # so a startup-notification spinner would never be answered.
        "StartupNotify=false",
    ]
    return "\n".join(lines) + "\n"


def mime_package(app: AppInfo) -> str:
    """A shared-mime-info package: our types, each claiming only its compound suffix."""
    types = []
    for t in app.file_types:
        types.append(
            f"  <mime-type type={quoteattr(t.mime_type)}>\n"
            f"    <comment>{escape(t.description)}</comment>\n"
            f"    <sub-class-of type={quoteattr(t.parent_mime)}/>\n"
            f"    <icon name={quoteattr(icon_name(t.mime_type))}/>\n"
            f'    <glob pattern={quoteattr(t.glob)} weight="{t.glob_weight}"/>\n'
            "  </mime-type>\n"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">\n'
        + "".join(types)
        + "</mime-info>\n"
    )


def icon_name(mime_type: str) -> str:
    """The icon-theme name of a MIME type's document icon (``/`` becomes ``-``)."""
    return mime_type.replace("/", "-")


def drop_associations(text: str, desktop_file: str, mime_types: set[str]) -> str:
    """``mimeapps.list`` without ``desktop_file`` as a handler of ``mime_types``.

    Only the values of our types change; every other line stays as it was. A key
    left with no handler is removed.
    """
    out = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in mime_types:
            kept = [v for v in value.strip().split(";") if v and v != desktop_file]
            if not kept:
                continue
            line = f"{key}=" + "".join(f"{v};" for v in kept)
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def has_entries(text: str) -> bool:
    """Whether a ``mimeapps.list`` says anything beyond group headers and comments."""
    return any(ln.strip() and not ln.strip().startswith(("#", "[")) for ln in text.splitlines())
