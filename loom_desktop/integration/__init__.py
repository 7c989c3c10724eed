"""How Loom Desktop tells an operating system that it opens ``*.loom.json``.

Everything is derived from the one description in :mod:`.description`: the
Linux desktop entry and shared-mime-info package (installed per user by
:mod:`.linux`), the macOS ``Info.plist`` (:mod:`.macos`) and the Windows
per-user registration (:mod:`.windows`). :mod:`.generate` writes the files the
installers of the other two systems need into ``packaging/``. Nothing here
imports Qt except the icon renderer, which only runs at development time.
"""
