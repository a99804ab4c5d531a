"""Querysets scoped to an owner: every app's rows are fetched as `Model.objects.for_user(user)`."""

from __future__ import annotations

from django.db import models


class OwnedQuerySet(models.QuerySet):
    def for_user(self, user):
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(owner=user)
