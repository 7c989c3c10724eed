"""File ▸ Open Claude Code Session…: the sessions on this machine, newest first."""
