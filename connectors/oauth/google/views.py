"""allauth's Google OAuth views on an adapter whose URLs follow settings (so tests can use a local fake)."""

from allauth.socialaccount.providers.google.views import GoogleOAuth2Adapter
from allauth.socialaccount.providers.oauth2.views import OAuth2CallbackView, OAuth2LoginView

from connectors import oauth


class GoogleDriveOAuth2Adapter(GoogleOAuth2Adapter):
    # allauth reads its Google URLs once at import; properties follow the settings instead.
    @property
    def authorize_url(self):
        return oauth.google_authorize_url()

    @property
    def access_token_url(self):
        return oauth.google_token_url()

    @property
    def identity_url(self):
        return oauth.google_userinfo_url()


oauth2_login = OAuth2LoginView.adapter_view(GoogleDriveOAuth2Adapter)
oauth2_callback = OAuth2CallbackView.adapter_view(GoogleDriveOAuth2Adapter)
