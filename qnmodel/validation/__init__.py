"""Validation studies: models against measurement (``qnmodel.validation.stripe``: striping)."""
