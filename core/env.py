"""Typed readers for settings that come from the environment (`KYBERNESIS_*`)."""

from __future__ import annotations

import os


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    return float(raw) if raw else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_prefixed(prefix: str) -> dict[str, str]:
    """Every variable that starts with prefix, keyed by the rest of its name in lower case."""
    return {
        name[len(prefix) :].lower(): value
        for name, value in os.environ.items()
        if name.startswith(prefix) and value.strip()
    }
