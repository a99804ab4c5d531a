"""Production settings: KYBERNESIS_HTTPS turns on the secure set, `check --deploy` is clean under the
documented production environment, and every page carries a Content-Security-Policy with no inline
script allowed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The documented production environment (docs/deployment.md, "The production environment").
PRODUCTION_ENV = {
    "KYBERNESIS_DEBUG": "0",
    "KYBERNESIS_HTTPS": "1",
    "KYBERNESIS_SECRET_KEY": "b1Fh3mK9q-Zx7Lr2Vd8Nw4Ys6Tc0Pj5Ua3Ge9Ho1Ki7Em2Qb8Rf4Sn6Wv0Xy5Cz3Dt",
    "KYBERNESIS_ALLOWED_HOSTS": "memory.example.org",
}


def _run(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KYBERNESIS_") and k not in ("DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    # Settings are read at import, so each environment gets its own process. No database is needed
    # (nothing connects), so a placeholder URL keeps the embedded server from starting.
    clean.update(
        {
            "KYBERNESIS_DATA_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://u:p@127.0.0.1:9/none",
            "DJANGO_SETTINGS_MODULE": "kybernesis.settings",
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=300, check=False
    )


def _settings(env: dict[str, str], tmp_path: Path) -> dict:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps({n: "
        "getattr(s, n, None) for n in ['SECURE_SSL_REDIRECT', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
        "'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_PROXY_SSL_HEADER']}))"
    )
    done = _run(["-c", code], env, tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_check_deploy_is_clean_under_the_documented_production_settings(tmp_path):
    done = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], PRODUCTION_ENV, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout + done.stderr


def test_without_https_check_deploy_names_what_is_missing(tmp_path):
    done = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {**PRODUCTION_ENV, "KYBERNESIS_HTTPS": "0"},
        tmp_path,
    )
    assert done.returncode != 0
    assert "security.W004" in done.stderr and "security.W008" in done.stderr


def test_https_turns_on_the_secure_set_and_the_proxy_header_is_opt_in(tmp_path):
    plain = _settings({}, tmp_path)
    assert plain == {
        "SECURE_SSL_REDIRECT": False,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_PROXY_SSL_HEADER": None,
    }
    secure = _settings({"KYBERNESIS_HTTPS": "1", "KYBERNESIS_PROXY_SSL_HEADER": "X-Forwarded-Proto"}, tmp_path)
    assert secure["SECURE_SSL_REDIRECT"] and secure["SESSION_COOKIE_SECURE"] and secure["CSRF_COOKIE_SECURE"]
    assert secure["SECURE_HSTS_SECONDS"] == 31_536_000
    assert secure["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


@pytest.mark.django_db
def test_https_redirects_plain_http_and_sends_hsts_behind_a_proxy(settings, client):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    from django.test import Client

    plain = Client().get("/accounts/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    proxied = Client().get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200
    assert proxied["Strict-Transport-Security"].startswith("max-age=31536000")


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_without_inline_scripts(client, user):
    client.force_login(user)
    for path in ("/accounts/login/", "/memories/", "/search/", "/graph/", "/api/v1/docs"):
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
        assert directives["script-src"] == "'self'", path
        assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in policy
        assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
        assert directives["form-action"] == "'self' https://accounts.google.com https://api.notion.com"


def test_no_template_has_an_inline_script_or_event_handler():
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)
    handler = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
    offenders = []
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        if inline_script.search(text) or handler.search(text) or "javascript:" in text or "hx-on" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
