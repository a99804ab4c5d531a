"""Giving freed C-heap memory back to the system, after work that briefly needed a lot of it."""

from __future__ import annotations

import ctypes
import ctypes.util

_libc = None


def c_library() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def release_memory() -> bool:
    """Hand the free parts of the heap back to the system (glibc's malloc_trim): glibc keeps freed
    memory for reuse, so a process that once held a large batch would keep that peak for good.
    False where there is no glibc, or nothing was returned."""
    try:
        return bool(c_library().malloc_trim(0))
    except (OSError, AttributeError):
        return False
