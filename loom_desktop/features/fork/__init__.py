"""Fork from here: the dialog, its draft and settings, the runner, branch tabs."""
