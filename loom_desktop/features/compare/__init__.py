"""Run comparison: the Compare dialog, the A-and-B tab and its models."""
