"""Every answer under /api/ is JSON, also for a route that does not exist or a wrong method."""

import pytest

pytestmark = pytest.mark.django_db


def test_unknown_api_route_is_a_json_404(client):
    response = client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert "no API route GET /api/v1/no-such-thing" in response.json()["detail"]


def test_wrong_method_is_a_json_405_with_allow(client):
    response = client.delete("/api/v1/search?q=x")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")
    assert "DELETE is not allowed" in response.json()["detail"]
    assert "GET" in response["Allow"]


def test_pages_keep_their_html_404(client, django_user_model):
    user = django_user_model.objects.create_user("pat", "pat@example.com", "pw-long-enough-1")
    client.force_login(user)
    response = client.get("/memories/999999/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_json_errors_pass_untouched(client):
    response = client.get("/api/v1/memories")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")


def test_a_missing_memory_says_what_was_not_found(api):
    response = api.get("/api/v1/memories/999999")
    assert response.status_code == 404
    assert response.json() == {"detail": "No Memory matches the given query: /api/v1/memories/999999"}


def test_a_multipart_body_that_cannot_be_read_is_a_400_that_says_why(api):
    """Not Django's bare {"detail": "Bad Request"} with a traceback in the log: the reason itself."""
    response = api.post("/api/v1/uploads", b"x", content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("The multipart/form-data body could not be read: ")


def test_too_many_query_parameters_is_a_400_that_names_the_limit(api):
    response = api.get("/api/v1/search?q=x&" + "&".join(["tag=a"] * 1100))
    assert response.status_code == 400
    assert "more than 1,000 fields" in response.json()["detail"]


def test_an_unknown_host_is_a_400_that_says_why_on_the_api_and_on_a_page(client):
    api = client.get("/api/v1/search?q=x", HTTP_HOST="evil.example")
    assert api.status_code == 400 and "KYBERNESIS_ALLOWED_HOSTS" in api.json()["detail"]
    page = client.get("/search/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and "KYBERNESIS_ALLOWED_HOSTS" in page.content.decode()
    assert page["Content-Type"].startswith("text/html")
