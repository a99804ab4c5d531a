from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from core import torchless

        torchless.install()  # before anything imports spaCy

        from django_q.signals import post_execute, post_execute_in_worker, post_spawn, pre_execute

        from core import queue, task_runs, task_workers

        pre_execute.connect(task_runs.record_start, dispatch_uid="core.task_runs.start")
        post_execute_in_worker.connect(task_runs.record_finish, dispatch_uid="core.task_runs.finish")
        post_execute.connect(queue.release_failed_task, dispatch_uid="core.queue.release_failed_task")
        post_spawn.connect(task_workers.on_worker_spawn, dispatch_uid="core.task_workers.spawn")
        post_execute_in_worker.connect(task_workers.on_task_done, dispatch_uid="core.task_workers.done")
        task_workers.follow_with_database()  # a process started by a task worker inherits its nice value
