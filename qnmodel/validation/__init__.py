"""Validation studies: a model against measurements (striping; the testbed, end to end)."""
