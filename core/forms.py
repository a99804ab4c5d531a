"""The form behind the account's API tokens page."""

from __future__ import annotations

from django import forms
from django.utils import timezone

from core.models import TokenScope
from core.text import validate_clean_text
from core.tokens import NAME_MAX, TokenInputError, expiry_parse, scopes_clean


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        max_length=NAME_MAX,
        validators=[validate_clean_text],
        help_text="What uses it, so you can tell your tokens apart: “laptop”, “research agent”.",
        widget=forms.TextInput(attrs={"placeholder": "e.g. research agent", "autocomplete": "off"}),
    )
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in TokenScope.ALL],
        initial=[TokenScope.READ],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one scope: read, write or both."},
    )
    expires = forms.DateField(
        required=False,
        help_text="It works through the end of that day. Leave empty for a token that does not expire.",
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"invalid": "Give the expiry as a date (YYYY-MM-DD)."},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["expires"].widget.attrs["min"] = timezone.localdate().isoformat()

    def clean_scopes(self) -> list[str]:
        try:
            return scopes_clean(self.cleaned_data["scopes"])
        except TokenInputError as exc:
            raise forms.ValidationError(str(exc).capitalize() + ".") from None

    def clean_expires(self):
        try:
            return expiry_parse(self.cleaned_data["expires"])
        except TokenInputError as exc:
            raise forms.ValidationError(str(exc)[0].upper() + str(exc)[1:] + ".") from None
