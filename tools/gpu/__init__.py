"""The GPU check's kit, for a lent GPU machine (development only; see tools/gpu/README.md)."""
