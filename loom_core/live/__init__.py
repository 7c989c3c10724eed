"""Following a run while it is written: tail, follow, live status, writers."""
