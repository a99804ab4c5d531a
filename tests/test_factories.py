"""Every model has a factory, and each one builds a valid, saved row."""

from __future__ import annotations

import pytest
from django.apps import apps

from tests import factories

pytestmark = pytest.mark.django_db

PROJECT_APPS = ("core", "memories", "graph", "connectors", "sleep")
FACTORIES = [
    value
    for value in vars(factories).values()
    if isinstance(value, type)
    and issubclass(value, factories.factory.django.DjangoModelFactory)
    and value is not factories.factory.django.DjangoModelFactory
]


def test_every_model_of_the_project_has_a_factory():
    models = {model for name in PROJECT_APPS for model in apps.get_app_config(name).get_models()}
    covered = {f._meta.model for f in FACTORIES}
    assert models - covered == set()


@pytest.mark.parametrize("factory_class", FACTORIES, ids=lambda f: f.__name__)
def test_each_factory_saves_a_valid_row(factory_class):
    row = factory_class()
    row.full_clean(exclude=["password", "embedding", "search_vector"])
    assert type(row).objects.filter(pk=row.pk).exists()
