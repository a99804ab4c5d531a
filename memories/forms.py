"""Forms behind the memory pages."""

from django import forms


class MemoryForm(forms.Form):
    title = forms.CharField(max_length=500, required=False,
                            widget=forms.TextInput(attrs={"placeholder": "Leave empty to use the first line"}))
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 14, "placeholder": "Paste or write anything…"}),
                              strip=False)
    tags = forms.CharField(required=False, help_text="Comma-separated, e.g. 2025-planning, review-needed",
                           widget=forms.TextInput(attrs={"placeholder": "project-x, meeting-notes"}))
    priority = forms.FloatField(required=False, min_value=0, max_value=1,
                                widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0.5"}))

    def clean_tags(self) -> list[str]:
        return [t for t in (part.strip() for part in self.cleaned_data["tags"].split(",")) if t]


class MemoryFilterForm(forms.Form):
    tier = forms.ChoiceField(required=False, choices=[("", "All tiers"), ("hot", "Hot"), ("warm", "Warm"),
                                                      ("archive", "Archive")])
    source = forms.ChoiceField(required=False, choices=[("", "All sources"), ("upload", "Upload"),
                                                        ("chat", "Chat"), ("connector", "Connector")])
    tag = forms.CharField(required=False, max_length=64)
