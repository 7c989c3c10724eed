"""The doctor panel: a tab's checkup findings, their model, and the way into Heal."""
