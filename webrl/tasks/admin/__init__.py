"""Task families for the admin panel (the shop's back office, WebArena's Magento
admin; template ids 300-399).

Kinds, as in WebArena: information retrieval answered with exit(message=...)
(`info`: reports, grids, customer and order facts), navigation judged by the
final URL (`navigation`), state changes judged by admin and storefront pages
fetched after the episode (`changes`), multi-requirement tasks (`multi`), and
infeasible ones whose right answer is "N/A" (`infeasible`). The admin shares
the shop's database, so catalogue changes are also checked on the storefront.
Reference answers are computed from the seed database in `build`; oracles act
only through the page's elements. Slots named in `held_out` never cross splits.
"""

from __future__ import annotations

from webrl.tasks.admin.base import AdminFamily
from webrl.tasks.admin.changes import (
    AddProduct,
    ApproveReviews,
    CancelOrder,
    ChangePrice,
    CreatePromotion,
    RejectReview,
    SetOrderStatus,
    SetStock,
    ToggleProduct,
)
from webrl.tasks.admin.infeasible import CancelShippedOrder, MissingCustomer, MissingProductPrice
from webrl.tasks.admin.info import (
    BestSeller,
    CategoryExtreme,
    CustomerContact,
    CustomerOrderTotal,
    CustomerStatusCount,
    LowStockCount,
    MonthRevenue,
    OrderCustomerEmail,
    PendingReviewCount,
    PromotionFact,
    SkuLookup,
)
from webrl.tasks.admin.multi import (
    DiscountBestSeller,
    HoldWithComment,
    ModerateByRating,
    RestockCategory,
)
from webrl.tasks.admin.navigation import (
    CustomerOrdersNav,
    FilterOrders,
    OpenOrder,
    OpenProductEdit,
    ProductsSorted,
)

# Interleaved by kind: the fixed test split takes one task per family in this
# order, so any prefix of the tuple mixes info, nav, state, multi and infeasible.
FAMILIES: tuple[AdminFamily, ...] = (
    CustomerStatusCount(), FilterOrders(), ChangePrice(), DiscountBestSeller(), MissingCustomer(),
    BestSeller(), OpenProductEdit(), CancelOrder(), HoldWithComment(), MonthRevenue(),
    ApproveReviews(), CancelShippedOrder(), CategoryExtreme(), CustomerOrdersNav(), AddProduct(),
    ModerateByRating(), CustomerContact(), SetStock(), MissingProductPrice(), PendingReviewCount(),
    OpenOrder(), CreatePromotion(), RestockCategory(), CustomerOrderTotal(), SetOrderStatus(),
    SkuLookup(), ProductsSorted(), ToggleProduct(), PromotionFact(), RejectReview(),
    LowStockCount(), OrderCustomerEmail(),
)  # fmt: skip

__all__ = ["FAMILIES", "AdminFamily"]
