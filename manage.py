#!/usr/bin/env python
"""Django's command-line utility for Kybernesis."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kybernesis.settings")
    from django.core.management import execute_from_command_line

    from kybernesis.boot import prepare

    prepare()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
