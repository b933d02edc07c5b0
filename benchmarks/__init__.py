"""Benchmarks: `python -m benchmarks.<name>` prints the numbers the README quotes."""
