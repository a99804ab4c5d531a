#!/usr/bin/env python
"""Django's command-line utility for Kybernesis."""

import os
import sys


def _settings_option(argv: list[str]) -> str | None:
    """The value of --settings, which Django reads only later, when the command runs."""
    for index, arg in enumerate(argv):
        if arg.startswith("--settings="):
            return arg.split("=", 1)[1]
        if arg == "--settings" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings")
    if chosen := _settings_option(sys.argv[1:]):
        os.environ["DJANGO_SETTINGS_MODULE"] = chosen
    from django.core.management import execute_from_command_line

    from kybernesis.boot import prepare

    prepare()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
