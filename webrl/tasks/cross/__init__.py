"""Cross-site task families (two sites per task)."""

from webrl.tasks.cross.shop_forum import RatingToComment, ShopPriceToForum

FAMILIES = (ShopPriceToForum(), RatingToComment())
