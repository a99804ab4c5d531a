from django.apps import AppConfig


class SleepConfig(AppConfig):
    name = "sleep"
    verbose_name = "Sleep agent"
