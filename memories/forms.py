"""Forms behind the memory pages."""

from django import forms
from django.utils.text import capfirst

from core.language import UNDETERMINED, language_name, parse_language_code
from core.text import TextError, parse_json, validate_clean_text
from memories.tag_rules import split_tags


class MemoryForm(forms.Form):
    title = forms.CharField(
        validators=[validate_clean_text],
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "Leave empty to use the first line"}),
    )
    content = forms.CharField(
        validators=[validate_clean_text],
        widget=forms.Textarea(attrs={"rows": 14, "placeholder": "Paste or write anything…"}),
        strip=False,
    )
    tags = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        help_text="Comma-separated, e.g. 2025-planning, review-needed",
        widget=forms.TextInput(attrs={"placeholder": "project-x, meeting-notes"}),
    )
    priority = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        # Left empty, the priority is computed (tier_rules.default_priority), so no number is suggested here.
        help_text="From 0 to 1. Leave empty to have it set from the source, manual tags and length; 0.65 or more keeps it hot.",
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "automatic"}),
    )

    def clean_tags(self) -> list[str]:
        return split_tags([self.cleaned_data["tags"]])


class MemoryFilterForm(forms.Form):
    tier = forms.ChoiceField(
        required=False,
        choices=[("", "All tiers"), ("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")],
        widget=forms.Select(attrs={"aria-label": "Tier"}),
    )
    source = forms.ChoiceField(
        required=False,
        choices=[("", "All sources"), ("upload", "Upload"), ("chat", "Chat"), ("connector", "Connector")],
        widget=forms.Select(attrs={"aria-label": "Source"}),
    )
    tag = forms.CharField(validators=[validate_clean_text], required=False, max_length=64)
    sort = forms.ChoiceField(
        required=False,
        choices=[
            ("created", "Newest first"),
            ("updated", "Recently updated"),
            ("priority", "Highest priority"),
            ("title", "Title A–Z"),
            ("accessed", "Last accessed"),
        ],
        widget=forms.Select(attrs={"aria-label": "Sort by"}),
    )


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class UploadForm(forms.Form):
    """The no-JavaScript upload form; the drop zone posts the same fields one file at a time."""

    files = forms.FileField(widget=MultipleFileInput(attrs={"multiple": True}), required=False)
    tags = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        max_length=2000,
        widget=forms.TextInput(
            attrs={"placeholder": "Tags for these files, comma-separated", "aria-label": "Tags for these files"}
        ),
    )


class ChatForm(forms.Form):
    content = forms.CharField(
        validators=[validate_clean_text],
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": "Ask or note something… (Enter sends, Shift+Enter for a new line)",
                "aria-label": "Message",
                "data-enter-sends": True,
            }
        ),
        strip=False,
        required=False,
    )
    session = forms.IntegerField(required=False, widget=forms.HiddenInput)


class SearchForm(forms.Form):
    """The search page's query and filters; the same names work in the URL, so results can be shared."""

    q = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        max_length=2000,
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "Search by meaning or keyword…",
                "autofocus": True,
                "autocomplete": "off",
                "aria-label": "Search your memories",
            }
        ),
    )
    tag = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"placeholder": "Tags, comma-separated", "aria-label": "Only with these tags"}),
    )
    source = forms.ChoiceField(
        required=False,
        choices=[("", "Any source"), ("upload", "Upload"), ("chat", "Chat"), ("connector", "Connector")],
        widget=forms.Select(attrs={"aria-label": "Source"}),
    )
    tier = forms.MultipleChoiceField(
        required=False,
        choices=[("hot", "Hot"), ("warm", "Warm"), ("archive", "Archive")],
        widget=forms.CheckboxSelectMultiple,
    )
    created_after = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    created_before = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    min_priority = forms.FloatField(
        required=False, min_value=0, max_value=1, widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0–1"})
    )
    # The choices are the languages of the user's memories (set by the view); any code the search
    # understands is accepted from the URL, and another value is a message on the page.
    language = forms.CharField(
        required=False,
        max_length=8,
        widget=forms.Select(choices=[("", "Any language")], attrs={"aria-label": "Language"}),
    )
    # One result per memory unless the URL says otherwise; "on" is what the old checkbox sent.
    group = forms.CharField(
        required=False,
        widget=forms.Select(
            choices=[("memory", "One result per memory"), ("chunk", "Every passage")],
            attrs={"aria-label": "Results"},
        ),
    )

    def set_languages(self, languages: list[tuple[str, int]]) -> None:
        """Offer the languages given as (code, memory count), most used first; "" is unknown."""
        choices = [("", "Any language")]
        for code, count in languages:
            label = language_name(code) if code else "Unknown language"
            choices.append((code or UNDETERMINED, f"{label} ({count})"))
        self.fields["language"].widget.choices = choices

    def clean_language(self) -> str | None:
        value = (self.cleaned_data.get("language") or "").strip()
        try:
            parse_language_code(value)
        except ValueError as exc:
            raise forms.ValidationError(capfirst(str(exc))) from None
        return value or None

    def clean_group(self) -> str:
        value = self.cleaned_data.get("group") or "memory"
        if value == "on":
            return "memory"
        if value not in ("memory", "chunk"):
            raise forms.ValidationError("Results are grouped by 'memory' or 'chunk'.")
        return value

    FILTERS = ("tag", "source", "tier", "created_after", "created_before", "min_priority", "language")

    @property
    def filtered(self) -> bool:
        """Whether any filter narrows the search (so "nothing matches" may be the filters' doing)."""
        data = getattr(self, "cleaned_data", {})
        return any(data.get(name) not in (None, "", [], 0) for name in self.FILTERS)  # min_priority 0 keeps all

    def clean(self):
        data = super().clean()
        after, before = data.get("created_after"), data.get("created_before")
        if after and before and after > before:
            raise forms.ValidationError("The “from” date is after the “to” date.")
        return data


class MemoryEditForm(forms.Form):
    """Edit a memory's title, content and metadata on its page; saved through services.memory_update."""

    title = forms.CharField(
        validators=[validate_clean_text],
        max_length=500,
        required=False,
        help_text="Leave empty to use the content's first line.",
    )
    content = forms.CharField(validators=[validate_clean_text], widget=forms.Textarea(attrs={"rows": 16}), strip=False)
    metadata = forms.CharField(
        validators=[validate_clean_text],
        required=False,
        widget=forms.Textarea(attrs={"rows": 5, "spellcheck": "false", "class": "mono"}),
        help_text='A JSON object, e.g. {"project": "atlas"}. Leave empty for none.',
    )

    def clean_metadata(self) -> dict:
        raw = self.cleaned_data["metadata"].strip()
        if not raw:
            return {}
        try:
            value = parse_json(raw)
        except TextError as exc:
            raise forms.ValidationError(f"This is {exc}.") from None
        if not isinstance(value, dict):
            raise forms.ValidationError('Metadata must be a JSON object, like {"key": "value"}.')
        return value
