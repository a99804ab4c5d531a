"""Receivers that tie allauth's OAuth connections to connector accounts."""

from allauth.socialaccount.signals import social_account_added, social_account_removed, social_account_updated
from django.dispatch import receiver

from connectors import services


@receiver(social_account_added, dispatch_uid="connectors.account_added")
@receiver(social_account_updated, dispatch_uid="connectors.account_updated")
def connect_account(sender, request, sociallogin, **kwargs) -> None:
    # allauth also sends "updated" when someone signs in with Google; only an explicit connect
    # from the connectors page (process=connect) by the account's own user makes a connector.
    if (sociallogin.state or {}).get("process") != "connect":
        return
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return
    services.connector_account_connect(user=user, social_account=sociallogin.account)


@receiver(social_account_removed, dispatch_uid="connectors.account_removed")
def unlink_account(sender, request, socialaccount, **kwargs) -> None:
    services.connector_account_unlink(social_account=socialaccount)
