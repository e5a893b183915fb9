"""Task families on the shop (One Stop Shop), with oracle solvers.

Spread like WebArena's shopping tasks: information retrieval answered with
exit(message=...) (`info`), navigation judged by the final URL (`navigation`),
state changes judged by pages fetched after the episode (`changes`),
multi-requirement tasks (`multi`), and infeasible ones whose right answer is
"N/A" (`infeasible`). Every reference answer is computed from the seed
database in `build`; every oracle acts only through the page's elements.
Template ids 100-199.
"""

from __future__ import annotations

from webrl.tasks.shop.base import ShopFamily
from webrl.tasks.shop.changes import (
    AddToCart,
    AddToWishlist,
    CancelOrder,
    PlaceOrder,
    UpdateAddress,
    UpdatePhone,
    WriteReview,
)
from webrl.tasks.shop.infeasible import MissingProductPrice, OrderTracking, OutOfStockCart
from webrl.tasks.shop.info import (
    CategoryExtreme,
    LastOrderDate,
    LatestReviewer,
    OrderStatus,
    OrderTotal,
    ProductPrice,
    ProductRating,
    ProductSku,
    ProductStock,
    ReviewCount,
)
from webrl.tasks.shop.multi import BuyTwo, GiftBundle, GiftOrder, Reorder, SaveExtreme
from webrl.tasks.shop.navigation import (
    CategorySorted,
    OpenCategory,
    OpenOrder,
    OpenProduct,
    SearchSorted,
)

FAMILIES: tuple[ShopFamily, ...] = (
    ProductPrice(), ProductStock(), ProductRating(), ReviewCount(), ProductSku(), CategoryExtreme(),
    OrderStatus(), OrderTotal(), LastOrderDate(), LatestReviewer(),
    OpenProduct(), OpenCategory(), OpenOrder(), CategorySorted(), SearchSorted(),
    AddToCart(), AddToWishlist(), WriteReview(), UpdatePhone(), UpdateAddress(), CancelOrder(), PlaceOrder(),
    BuyTwo(), GiftOrder(), Reorder(), GiftBundle(), SaveExtreme(),
    MissingProductPrice(), OrderTracking(), OutOfStockCart(),
)  # fmt: skip

__all__ = ["FAMILIES", "ShopFamily"]
