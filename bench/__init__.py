"""Benchmark, stress and simulation commands (`manage.py bench_*`); imported by nobody."""
