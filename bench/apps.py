"""The bench app's config: installed so that manage.py finds the bench_* commands from a checkout."""

from django.apps import AppConfig


class BenchConfig(AppConfig):
    name = "bench"
    verbose_name = "Benchmarks"
