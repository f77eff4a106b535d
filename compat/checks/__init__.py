"""Checks: the one registry (`compat.checks.registry`) and one module per subject."""
