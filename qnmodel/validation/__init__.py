"""Validation studies: a model against measurements on the testbed, end to end."""
