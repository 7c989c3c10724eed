"""Qt item models: one per core collection, adapters only."""
