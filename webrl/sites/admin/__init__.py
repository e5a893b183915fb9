"""Admin Panel: the shop's back office (WebArena's Magento admin), on the shop's database."""

from __future__ import annotations

from webrl.sites.admin.app import create_app
from webrl.sites.admin.data import DEFAULT_USER, build_db
from webrl.sites.state import SiteSpec

SPEC = SiteSpec(
    name="admin",
    title="Admin Panel",
    build_db=build_db,
    create_app=create_app,
    default_user=DEFAULT_USER,
    description="the shop's back office: orders, catalogue, customers, reviews, reports, promotions",
    database="shop",
    users_table="admin_users",
    sessions_table="admin_sessions",
)

__all__ = ["SPEC"]
