"""Benchmark scripts, run from a clone (not installed); `wizard bench` runs `wizard_env.tools.bench`."""
