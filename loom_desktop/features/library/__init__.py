"""The run library in the window: the Runs page (start page and dock) and search across runs."""
