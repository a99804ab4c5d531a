"""Django's PostgreSQL engine, with the embedded server started (or joined) when a connection is first needed.

Settings name the data directory only (`EMBEDDED_DATA_DIR`); the socket directory, user and port are
known once pgserver has started, so they are filled into the connection's settings then. Importing
settings, running `manage.py check` or collecting tests therefore starts nothing.
"""

from __future__ import annotations

from pathlib import Path

from django.db.backends.postgresql import base, client

from kybernesis.db import database_settings, embedded_database_url

_urls: dict[Path, str] = {}


def server_settings(data_dir: Path) -> dict:
    """HOST, PORT, USER, PASSWORD and OPTIONS of the running embedded server (started on first use)."""
    data_dir = Path(data_dir)
    if data_dir not in _urls:
        _urls[data_dir] = embedded_database_url(data_dir)
    parsed = database_settings(_urls[data_dir])
    return {key: parsed[key] for key in ("HOST", "PORT", "USER", "PASSWORD")} | {"OPTIONS_FROM_URL": parsed["OPTIONS"]}


class DatabaseClient(client.DatabaseClient):
    def runshell(self, parameters):
        self.connection.ensure_server()
        return super().runshell(parameters)


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def ensure_server(self) -> None:
        if self.settings_dict.get("HOST"):
            return
        found = server_settings(self.settings_dict["EMBEDDED_DATA_DIR"])
        self.settings_dict["OPTIONS"] = {**found.pop("OPTIONS_FROM_URL"), **self.settings_dict.get("OPTIONS", {})}
        self.settings_dict.update(found)

    def get_connection_params(self):
        self.ensure_server()
        return super().get_connection_params()
