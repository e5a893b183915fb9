import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webrl.env.actions import ACTIONS, Action, format_action, parse_action


@pytest.mark.parametrize(
    "text, kind, element, argument",
    [
        ('do(action="Click", element="7")', "Click", 7, None),
        ("do(action='Click', element=7)", "Click", 7, None),
        ('# Element: the cart link\ndo(action="Click", element="12")', "Click", 12, None),
        ('do(action="Type", argument="blue mug", element="3")', "Type", 3, "blue mug"),
        ('do(action="Search", argument="a \\"quoted\\" word", element="3")', "Search", 3, 'a "quoted" word'),
        ('do(action="Select Dropdown Option", argument="Price", element="9")', "Select Dropdown Option", 9, "Price"),
        ('do(action="Scroll Down")', "Scroll Down", None, None),
        ('do(action="Go Backward")', "Go Backward", None, None),
        ('exit(message="N/A")', "exit", None, "N/A"),
        ("exit(message=42)", "exit", None, "42"),
    ],
)
def test_parse_valid(text, kind, element, argument):
    r = parse_action(text)
    assert r.error is None, r.error
    assert r.action == Action(kind, element, argument)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "no action"),
        ("click the button", "no action"),
        ('do(action="Fly", element="1")', "unknown action"),
        ('do(action="Click")', "needs element"),
        ('do(action="Click", element="abc")', "needs element"),
        ('do(action="Type", element="3")', "needs argument"),
        ('do(action="Click", element=__import__("os").system("x"))', "literal"),
        ('do("Click", "3")', "keyword"),
        ('os.system("ls")', "no action found"),
        ('do(action="Click", element="1").x', "must be a call"),
        ('do(action="Click", element="1")(2)', "must be a call"),
        ('exit(message="a", code=3)', "only message"),
        ('do(action="Click", action="Type", element="1", argument="x")', "given twice"),
        ('do(action="Click", element="1"', "could not parse"),
        ('do(action="Type", argument="' + "x" * 5000 + '", element="1")', "too long"),
        (None, "must be text"),
    ],
)
def test_parse_invalid(text, fragment):
    r = parse_action(text)
    assert r.action is None
    assert fragment in r.error


def test_format_roundtrip():
    for a in [Action("Click", 3), Action("Type", 2, 'he said "hi"\n'), Action("exit", argument="ünï")]:
        assert parse_action(format_action(a)).action == a
    for kind in ACTIONS:
        if kind in ("Click", "Type", "Search", "Select Dropdown Option"):
            continue
        assert parse_action(format_action(Action(kind))).action == Action(kind)


actions = st.sampled_from(list(ACTIONS) + ["exit", "Clickk", ""])
texts = st.one_of(st.text(max_size=40), st.sampled_from(['"', "\\", ")", "\n", "'''", "1e9", "-1"]))


@st.composite
def mangled(draw):
    kind = draw(actions)
    parts = [f"action={kind!r}"]
    if draw(st.booleans()):
        parts.append(f"element={draw(st.one_of(st.integers(-5, 10**12), texts))!r}")
    if draw(st.booleans()):
        parts.append(f"argument={draw(texts)!r}")
    base = f"{draw(st.sampled_from(['do', 'exit', 'do ', 'Do', '']))}({', '.join(parts)})"
    cut = draw(st.integers(0, len(base)))
    return draw(st.sampled_from([base, base[:cut], base[cut:], base + draw(st.text(max_size=20))]))


@settings(max_examples=4000, deadline=None)
@given(st.one_of(mangled(), st.text(max_size=200), st.binary(max_size=50).map(lambda b: b.decode("latin-1"))))
def test_parser_never_raises(text):
    r = parse_action(text)
    assert (r.action is None) != (r.error is None)
