"""allauth's Notion OAuth views on an adapter whose URLs follow settings (so tests can use a local fake)."""

from allauth.socialaccount.providers.notion.views import NotionOAuth2Adapter
from allauth.socialaccount.providers.oauth2.views import OAuth2CallbackView, OAuth2LoginView

from connectors import oauth


class NotionConnectorOAuth2Adapter(NotionOAuth2Adapter):
    @property
    def authorize_url(self):
        return oauth.notion_url("/v1/oauth/authorize")

    @property
    def access_token_url(self):
        return oauth.notion_url("/v1/oauth/token")


oauth2_login = OAuth2LoginView.adapter_view(NotionConnectorOAuth2Adapter)
oauth2_callback = OAuth2CallbackView.adapter_view(NotionConnectorOAuth2Adapter)
