"""allauth's login and callback URLs for the `google` provider, served by the views in this package."""

from allauth.socialaccount.providers.oauth2.urls import default_urlpatterns

from connectors.oauth.google.provider import GoogleDriveProvider

urlpatterns = default_urlpatterns(GoogleDriveProvider)
