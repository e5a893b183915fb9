"""Patient versions of BrowserGym's element and history actions, used by `make_env`.

BrowserGym's own actions give an element 500 ms to become usable *and* to
finish the navigation a click starts, which a busy 2-core machine misses.
These keep BrowserGym's names and arguments (so `to_browsergym` output runs on
either set) with a 10 s limit, and Back/Forward show the page as the server
sends it (form fields reset), as our `http` and `chromium` backends do.

BrowserGym copies each function's *source* into the namespace where it runs
actions (which defines `page` and `get_elem_by_bid`), so the bodies use only
those names and literal values.
"""

# ruff: noqa: F821  (page and get_elem_by_bid exist where BrowserGym runs these)

from __future__ import annotations


def click(bid: str):
    """
    Click an element.

    Examples:
        click('a51')
    """
    get_elem_by_bid(page, bid).click(timeout=10000)


def fill(bid: str, value: str):
    """
    Fill out a form field. It focuses the element and triggers an input event with the entered text.

    Examples:
        fill('237', 'example value')
    """
    get_elem_by_bid(page, bid).fill(value, timeout=10000)


def select_option(bid: str, options: str):
    """
    Select an option in a <select> element by its label or value.

    Examples:
        select_option('a48', 'blue')
    """
    get_elem_by_bid(page, bid).select_option(options, timeout=10000)


def press(bid: str, key_comb: str):
    """
    Focus the matching element and press a combination of keys.

    Examples:
        press('88', 'Enter')
    """
    get_elem_by_bid(page, bid).press(key_comb, timeout=10000)


def go_back():
    """
    Navigate to the previous page in history.

    Examples:
        go_back()
    """
    if page.go_back(wait_until="load", timeout=10000) is not None:
        page.evaluate("() => { for (const f of document.forms) f.reset(); }")


def go_forward():
    """
    Navigate to the next page in history.

    Examples:
        go_forward()
    """
    if page.go_forward(wait_until="load", timeout=10000) is not None:
        page.evaluate("() => { for (const f of document.forms) f.reset(); }")


PATIENT_ACTIONS = [click, fill, select_option, press, go_back, go_forward]
