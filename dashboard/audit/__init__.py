"""The audit log: ``writer.py`` (writing rows), ``summary.py`` (what a row did, in words)."""
