"""allauth's login and callback URLs for the `notion` provider, served by the views in this package."""

from allauth.socialaccount.providers.oauth2.urls import default_urlpatterns

from connectors.oauth.notion.provider import NotionConnectorProvider

urlpatterns = default_urlpatterns(NotionConnectorProvider)
