"""The sleep agent: scheduled tag, link, tier and summarize cycles."""
