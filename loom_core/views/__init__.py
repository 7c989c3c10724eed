"""Read-only views of a loaded run: steps, timeline, context, filters, summary, cost."""
