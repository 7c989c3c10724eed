"""The run library: every run the user has, indexed in one SQLite file, searchable across runs.

Modules: :mod:`.db` (where the file is, its schema and version), :mod:`.extract` (a run's
facts and its steps' text), :mod:`.ending` and :mod:`.outcomes` (how a run ended, decided
by the function the live tab uses), :mod:`.scan` (which files are runs, the default folders),
:mod:`.index` (the writer), :mod:`.query` (the search language), :mod:`.search` (the
reader), :mod:`.worker` (indexing in a background thread) and :mod:`.watch` (folder
changes).

The API a desktop Runs page uses (all Qt-free; nothing here blocks for long except where
said):

- ``LibraryIndexer(folders=None, on_progress=cb, on_changed=cb)`` (:mod:`.worker`): the one
  writer of the app. ``start()`` scans ``default_folders()`` (or ``folders``) on its own
  thread and then follows changes with a watchdog observer; ``stop()`` cancels and joins
  both. Requests return at once: ``add_folder(dir)`` (e.g. the proxy's save folder),
  ``remove_folder(dir)``, ``note(path, event)`` with ``event`` one of ``opened``,
  ``recording`` (the app writes it), ``recorded``, ``forked``, ``healed``, and
  ``error=`` what error the app saw end it (its agent crashed); ``forget(path)`` (drop it from the library; the file stays); ``refresh()``;
  ``cancel()``; ``wait_idle(timeout)`` (tests). ``on_progress(IndexProgress)`` and
  ``on_changed(list_of_paths)`` are called on the worker thread: forward them to the GUI
  thread with a queued signal; ``progress`` holds the latest.
- ``Library()`` (:mod:`.search`): a reader; open one per thread (a worker for queries is
  fine, each query is milliseconds). ``runs(query="", sort="time", descending=True,
  limit=200, offset=0) -> list[RunRow]`` (sorts: ``SORTS``; ``query`` takes the search
  syntax, run keys alone keep missing/unreadable rows listed); ``run(path)``,
  ``branches(path)`` (children by ``RunRow.parent``; a heal winner has ``healed_by``),
  ``count()``, ``search(query, limit=100) -> list[Hit]`` (``Hit.path``, ``Hit.seq`` -- None
  for a user prompt --, ``Hit.snippet`` with ``Hit.marks`` spans, ``Hit.marked(open,
  close)``). A query with a problem raises ``LoadError`` whose ``cause`` is the message to
  show; ``parse_search(text).problems`` (:mod:`.query`) checks without running it.
- ``RunRow`` fields: ``path, format, title, models, steps, tokens_in, tokens_out, cost``
  (None: unpriced), ``errors, outcome`` (:data:`loom_core.live.outcome.OUTCOMES`: finished,
  failed, waiting on a human, stopped without finishing, running) and ``why``,
  ``started, ended, time`` (unix seconds), ``parent, fork_seq, healed_by, state`` (ok /
  missing / unreadable) with ``cause``, ``source`` (found / opened / recorded / forked /
  healed), ``size``.
"""
