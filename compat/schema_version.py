"""The one `schema_version` of every JSON document compat writes, in a leaf module every layer may import."""

SCHEMA_VERSION = 1
"""The `schema_version` of every JSON document compat writes (reports, diagnoses, smoke, fleet, suggestion,
snapshots, run records, NVML profiles). Bumped only for a change that breaks a reader."""
