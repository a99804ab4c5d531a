"""Forms behind the memory pages."""

from django import forms

from core.text import validate_clean_text
from memories.tagging import split_tags


class MemoryForm(forms.Form):
    title = forms.CharField(validators=[validate_clean_text], max_length=500, required=False,
                            widget=forms.TextInput(attrs={"placeholder": "Leave empty to use the first line"}))
    content = forms.CharField(validators=[validate_clean_text],
                              widget=forms.Textarea(attrs={"rows": 14, "placeholder": "Paste or write anything…"}),
                              strip=False)
    tags = forms.CharField(validators=[validate_clean_text],
                           required=False, help_text="Comma-separated, e.g. 2025-planning, review-needed",
                           widget=forms.TextInput(attrs={"placeholder": "project-x, meeting-notes"}))
    priority = forms.FloatField(required=False, min_value=0, max_value=1,
                                widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0.5"}))

    def clean_tags(self) -> list[str]:
        return split_tags([self.cleaned_data["tags"]])


class MemoryFilterForm(forms.Form):
    tier = forms.ChoiceField(required=False, choices=[("", "All tiers"), ("hot", "Hot"), ("warm", "Warm"),
                                                      ("archive", "Archive")])
    source = forms.ChoiceField(required=False, choices=[("", "All sources"), ("upload", "Upload"),
                                                        ("chat", "Chat"), ("connector", "Connector")])
    tag = forms.CharField(validators=[validate_clean_text], required=False, max_length=64)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class UploadForm(forms.Form):
    """The no-JavaScript upload form; the drop zone posts the same fields one file at a time."""

    files = forms.FileField(widget=MultipleFileInput(attrs={"multiple": True}), required=False)
    tags = forms.CharField(validators=[validate_clean_text], required=False, max_length=2000,
                           widget=forms.TextInput(attrs={"placeholder": "Tags for these files, comma-separated"}))


class ChatForm(forms.Form):
    content = forms.CharField(validators=[validate_clean_text],
                              widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Write a message…"}),
                              strip=False, required=False)
    session = forms.IntegerField(required=False, widget=forms.HiddenInput)


class SearchForm(forms.Form):
    """The search page's query and filters; the same names work in the URL, so results can be shared."""

    q = forms.CharField(validators=[validate_clean_text], required=False, max_length=2000,
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Search by meaning or keyword…",
                                                      "autofocus": True, "autocomplete": "off"}))
    tag = forms.CharField(validators=[validate_clean_text], required=False, max_length=200,
                          widget=forms.TextInput(attrs={"placeholder": "Tags, comma-separated"}))
    source = forms.ChoiceField(required=False, choices=[("", "Any source"), ("upload", "Upload"), ("chat", "Chat"),
                                                        ("connector", "Connector")])
    tier = forms.MultipleChoiceField(required=False, choices=[("hot", "Hot"), ("warm", "Warm"),
                                                               ("archive", "Archive")],
                                     widget=forms.CheckboxSelectMultiple)
    created_after = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    created_before = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    min_priority = forms.FloatField(required=False, min_value=0, max_value=1,
                                    widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0–1"}))
    group = forms.BooleanField(required=False, label="One result per memory")

    def clean(self):
        data = super().clean()
        after, before = data.get("created_after"), data.get("created_before")
        if after and before and after > before:
            raise forms.ValidationError("The “from” date is after the “to” date.")
        return data
