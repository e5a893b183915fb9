"""The compact page view: every element kind rewritten label-first, in agreement with element_ref."""

from webrl.agent.view import compact_page, element_ref
from webrl.env.observation import Element, render_element


def test_each_element_kind_hand_checked():
    obs = (
        "URL: http://127.0.0.1:7770/shop/search?q=mug\nTitle: Search\n"
        '<a id=1>Blue Mug</a> <button id=3>Search</button> <a id=4></a>\n'
        '<input id=2 name=q placeholder="Search products" value="mug">\n'
        '<input id=5 type=number name=qty value="1">\n'
        "<input id=6 type=checkbox name=agree checked> <input id=7 type=radio name=size value=L>\n"
        '<select id=10 name=sort selected="Name">Relevance|Name</select>\n'
        '<textarea id=11 name=body>hello "you"</textarea>\n'
        "Plain text [not an element](x) stays"
    )
    assert compact_page(obs) == (
        "URL: /shop/search?q=mug\nTitle: Search\n"
        "[Blue Mug](1) [Search](3) [link](4)\n"
        '[q](2) placeholder="Search products" value="mug"\n'
        '[qty](5) number value="1"\n'
        "[agree](6) checkbox checked [size L](7) radio\n"
        '[sort](10) selected="Name" options: Relevance|Name\n'
        '[body](11) text="hello "you""\n'
        "Plain text [not an element](x) stays"
    )


def test_element_ref_matches_the_view_of_the_rendered_element():
    cases = [
        Element(1, "a", "Order #000189", {"href": "/o/189"}),
        Element(2, "button", "Add to cart", {}),
        Element(3, "input", "Post", {"type": "submit"}),
        Element(4, "input", "kite", {"name": "q", "placeholder": "Filter by name"}),
        Element(5, "input", "", {"type": "checkbox", "name": "notify", "value": "yes"}),
        Element(6, "select", "Open", {"name": "status"}, options=["Open", "Closed"]),
        Element(7, "textarea", "", {"name": "comment"}),
        Element(8, "input", "x", {}),
    ]
    for el in cases:
        ref = element_ref(el.to_json(True))
        assert compact_page(render_element(el)).startswith(ref), (render_element(el), ref)
