"""The topology page's filters; the same names work in the URL, so a view of the graph can be shared."""

from django import forms
from django.conf import settings

from core.text import validate_clean_text
from graph.models import EntityType
from graph.selectors import MAX_GRAPH_NODES


class GraphFilterForm(forms.Form):
    view = forms.ChoiceField(required=False, choices=[("entities", "Entities"), ("memories", "Memories")])
    type = forms.MultipleChoiceField(required=False, choices=EntityType.choices, widget=forms.CheckboxSelectMultiple)
    tag = forms.CharField(validators=[validate_clean_text], required=False, max_length=64)
    min_weight = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Min weight",
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0"}),
    )
    q = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        max_length=200,
        label="Find entity",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Find an entity…"}),
    )
    limit = forms.IntegerField(required=False, min_value=1, max_value=MAX_GRAPH_NODES)

    def clean_view(self) -> str:
        return self.cleaned_data["view"] or "entities"

    def clean_limit(self) -> int:
        return self.cleaned_data["limit"] or settings.KYBERNESIS_GRAPH_NODE_LIMIT
