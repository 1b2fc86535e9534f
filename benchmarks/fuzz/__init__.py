"""Fuzz targets of the parsers of outside input (docs/performance.md#fuzzing): ``python -m benchmarks.fuzz TARGET``."""
