"""Benchmark scripts: `wizard bench` runs `benchmarks.speed`."""
