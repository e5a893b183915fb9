"""A site's navigation lines, learned from pages and dropped from the encoder ORM's page segment:
hand-built pages with known navigation, shares and paths."""

import pytest

from webrl.orm.chrome import chrome_lines, drop_query, page_segment, site_key

NAV = '<a id=1>One Stop Shop</a>\n<input id=2 name=q placeholder="Search products" value=""> <button id=3>Search</button>'


def shop_page(path: str, body: str, cart: int = 0) -> str:
    return (f"URL: http://127.0.0.1:7770/shop/{path}\nTitle: {path} - One Stop Shop\n{NAV}\n"
            f"<a id=4>Cart ({cart})</a>\n{body}")  # fmt: skip


def test_site_key_is_the_first_path_segment():
    assert site_key("URL: /shop/product/3\nTitle: x") == "shop"
    assert site_key("URL: /admin?page=2\nTitle: x") == "admin"
    assert site_key("URL: /\nTitle: WebRL sites") == ""
    assert site_key("no url line") == ""


def test_navigation_is_what_most_pages_of_many_paths_share():
    # 30 shop pages over 10 paths; the cart line varies with the state (cart 0 on 20 of them)
    pages = [
        shop_page(f"product/{i % 10}", f"# Product {i}\nPrice: ${i}.00", cart=i % 3 // 2)
        for i in range(30)
    ]
    # 25 pages of one path, all alike: one page's own content, not navigation
    pages += [
        "URL: http://127.0.0.1:7770/\nTitle: WebRL sites\n# WebRL sites\n- <a id=1>One Stop Shop</a>"
    ] * 25
    lines = chrome_lines(pages, share=0.5)
    assert lines == {
        "shop": [
            "[One Stop Shop](1)",
            '[q](2) placeholder="Search products" value="" [Search](3)',
            "[Cart (0)](4)",
        ]
    }  # fmt: skip  (30, 30, 20 pages: by count, then text)
    # the cart line stands on 20 of 30 pages: over a share of 0.5, under 0.7
    assert chrome_lines(pages, share=0.7) == {"shop": lines["shop"][:2]}
    assert (
        chrome_lines(pages, share=0.5, min_paths=11) == {}
    )  # every shop line is on 10 paths at most
    assert chrome_lines(pages[:15], share=0.5, min_pages=20) == {}  # too few pages to tell
    with pytest.raises(ValueError, match="share"):
        chrome_lines(pages, share=0)


def test_page_segment_keeps_url_title_and_content():
    page = shop_page(
        "cart?msg=Added+2+%C3%97+Blue+Mug&page=2",
        "# Shopping cart\n<a id=5>Blue Mug</a> | $2.00",
        cart=2,
    )
    chrome = {
        "shop": ["[One Stop Shop](1)", '[q](2) placeholder="Search products" value="" [Search](3)'],
        "admin": ["[Cart (2)](4)"],
    }  # another site's lines are not this page's chrome
    assert page_segment(page, chrome) == ("URL: /shop/cart?msg=Added+2+%C3%97+Blue+Mug&page=2\n"
                                          "Title: cart?msg=Added+2+%C3%97+Blue+Mug&page=2 - One Stop Shop\n"
                                          "[Cart (2)](4)\n# Shopping cart\n[Blue Mug](5) | $2.00")  # fmt: skip
    assert page_segment(page, chrome, drop_msg=True).split("\n")[0] == "URL: /shop/cart?page=2"
    assert page_segment(page, {}) == page_segment(
        page, {"map": ["[One Stop Shop](1)"]}
    )  # nothing learnt: the view


def test_drop_query_hand_checked():
    assert drop_query("URL: /shop/cart?msg=Saved") == "URL: /shop/cart"
    assert drop_query("URL: /a?x=1&msg=Hi+there&y=") == "URL: /a?x=1&y="
    assert drop_query("URL: /a") == "URL: /a"
    assert drop_query("Title: not a url") == "Title: not a url"
