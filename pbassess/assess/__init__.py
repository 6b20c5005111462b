"""assess layer (public names are re-exported here once its modules land)."""
