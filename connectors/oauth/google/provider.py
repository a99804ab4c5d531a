"""The `google` provider, registered through SOCIALACCOUNT_PROVIDERS["google"]["provider_class"]."""

from allauth.socialaccount.providers.google.provider import GoogleProvider

from connectors.oauth.google.views import GoogleDriveOAuth2Adapter


class GoogleDriveProvider(GoogleProvider):
    oauth2_adapter_class = GoogleDriveOAuth2Adapter


provider_classes = [GoogleDriveProvider]
