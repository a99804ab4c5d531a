"""The `notion` provider, registered through SOCIALACCOUNT_PROVIDERS["notion"]["provider_class"]."""

from allauth.socialaccount.providers.notion.provider import NotionProvider

from connectors.oauth.notion.views import NotionConnectorOAuth2Adapter


class NotionConnectorProvider(NotionProvider):
    oauth2_adapter_class = NotionConnectorOAuth2Adapter

    def extract_uid(self, data):
        owner_user = (data.get("owner") or {}).get("user") or {}
        if owner_user.get("id"):
            return super().extract_uid(data)
        return f"bot-{data['bot_id']}_workspace-{data.get('workspace_id', '')}"

    def extract_common_fields(self, data):
        # A Notion token may belong to a workspace bot or a person without a shared e-mail address;
        # allauth's provider assumes both exist. Connecting never creates a user, so nothing is lost.
        user = dict((data.get("owner") or {}).get("user") or {})
        user["email"] = ((user.get("person") or {}).get("email")) or None
        return user

    def extract_email_addresses(self, data):
        return []


provider_classes = [NotionConnectorProvider]
