"""One Stop Shop: an e-commerce storefront (WebArena's shopping site)."""

from __future__ import annotations

from webrl.sites.shop.app import create_app
from webrl.sites.shop.data import DEFAULT_USER, build_db
from webrl.sites.state import SiteSpec

SPEC = SiteSpec(
    name="shop",
    title="One Stop Shop",
    build_db=build_db,
    create_app=create_app,
    default_user=DEFAULT_USER,
    description="an online store: catalogue, cart, checkout, orders, reviews",
)

__all__ = ["SPEC"]
