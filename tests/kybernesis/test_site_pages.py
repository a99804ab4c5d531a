"""Site-wide pages: favicon, styled 404, API docs from our own static files, connector setup help,
password reset mail note, and no inline scripts or handlers in templates (for the CSP)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_favicon_is_served():
    response = Client().get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert b"<svg" in b"".join(response.streaming_content) if response.streaming else response.content


def test_the_404_page_is_in_the_site_layout(logged_in_client):
    response = logged_in_client.get("/no/such/page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "This page does not exist" in html and 'class="topbar"' in html and "Skip to content" in html


def test_the_api_docs_page_loads_swagger_from_static_vendor_only():
    html = Client().get("/api/v1/docs").content.decode()
    assert "vendor/swagger-ui/swagger-ui-bundle-5.35.0.js" in html
    assert not re.search(r"""(src|href)=["']https?://""", html)


def test_connectors_page_shows_redirect_uris_steps_and_the_admin_link(logged_in_client):
    html = logged_in_client.get("/connectors/").content.decode()
    assert 'value="http://testserver/accounts/google/login/callback/"' in html
    assert 'value="http://testserver/accounts/notion/login/callback/"' in html
    assert html.count('<ol class="setup-steps">') == 2
    assert re.findall(r'<ol class="setup-steps">(.*?)</ol>', html, re.DOTALL)[0].count("<li>") == 3
    assert 'href="/admin/socialaccount/socialapp/"' in html


def test_password_reset_says_where_console_mail_goes():
    html = Client().get("/accounts/password/reset/").content.decode()
    assert "Where the email goes" in html and "log" in html


def test_no_template_has_inline_scripts_or_event_handlers():
    offenders = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        for match in re.finditer(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", text):
            offenders.append(f"{path.name}: {match.group(0)}")
        for match in re.finditer(r"\son[a-z]+\s*=\s*[\"']", text):
            offenders.append(f"{path.name}: {match.group(0)}")
    assert offenders == []


def test_the_500_page_is_in_the_site_layout():
    from django.test import RequestFactory
    from django.views.defaults import server_error

    response = server_error(RequestFactory().get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in html and 'class="topbar"' in html


def test_every_page_links_to_the_account_pages_which_offer_the_export(logged_in_client, user):
    html = logged_in_client.get("/memories/").content.decode()
    assert re.search(r'<a class="account-link" href="/accounts/email/"[^>]*aria-label="Account: ' + user.email, html)
    for url in ("/accounts/email/", "/accounts/password/change/"):
        page = logged_in_client.get(url).content.decode()
        assert 'aria-label="Account"' in page and 'aria-current="page"' in page
        assert 'href="/accounts/password/change/"' in page and 'href="/memories/data/"' in page
        assert 'id="account-export-button" href="/api/v1/export" download' in page


def test_the_import_file_input_has_a_label(logged_in_client):
    html = logged_in_client.get("/memories/data/").content.decode()
    assert '<label for="import-file"' in html and 'id="import-file"' in html
