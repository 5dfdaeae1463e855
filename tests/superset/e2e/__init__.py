"""Apache Superset 6.1 end to end, in its own virtualenv and a headless browser."""
