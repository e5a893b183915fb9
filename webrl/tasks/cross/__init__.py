"""Cross-site task families (two sites per task)."""

from webrl.tasks.cross.forum_code import TopPostToIssue
from webrl.tasks.cross.map_admin_forum import AddressToComment, BestSellerToForum
from webrl.tasks.cross.shop_forum import RatingToComment, ShopPriceToForum

FAMILIES = (ShopPriceToForum(), AddressToComment(), TopPostToIssue(), RatingToComment(), BestSellerToForum())
