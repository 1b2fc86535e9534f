"""Helpers every layer may use, importing nothing of the project: atomic output files, optional extras, value checks."""
