"""The run library: every run the user has, indexed in one SQLite file, searchable across runs.

:mod:`.db` (where the file is, its schema), :mod:`.extract` (a run's facts and step text),
:mod:`.scan` (which files are runs), :mod:`.index` (the writer), :mod:`.query` (the search
language), :mod:`.search` (the reader), :mod:`.worker` (indexing in a background thread
for the desktop) and :mod:`.watch` (folder changes).
"""
