"""The `http` backend: a JavaScript-free browser over the site apps, in process.

Requests go straight to the world's WSGI app (no sockets). The browser keeps
what a real one keeps: cookies per episode, form field values client-side until
submit, redirects, and back/forward history. Field edits are written into the
page's DOM, so the observation shows the current values and a submitted form
sends them.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import quote, unquote_to_bytes, urlencode, urljoin, urlsplit, urlunsplit

from webrl.env.actions import Action
from webrl.env.observation import TEXT_INPUT_TYPES, norm, parse_html
from webrl.sites.world import WorldApp

MAX_REDIRECTS = 10
SUBMIT_TYPES = ("submit", "image")


class ActionError(Exception):
    """The action could not be carried out on this page (shown to the agent)."""


def browser_url(url: str) -> str:
    """`url` percent-encoded as a browser's address bar shows it (WHATWG URL rules for
    path and query: spaces, quotes, `<>` and non-ASCII), so every backend reports the
    same URL for the same page, e.g. a redirect to `?msg=Pemberton's` becomes `%27s`."""
    parts = urlsplit(url)
    path = _percent_encode(parts.path, ' "<>`{}')
    query = _percent_encode(parts.query, " \"<>'")
    if (path, query) == (parts.path, parts.query):
        return url
    return urlunsplit(parts._replace(path=path, query=query))


def _percent_encode(text: str, unsafe: str) -> str:
    return "".join(c if " " < c < "\x7f" and c not in unsafe else quote(c, safe="") for c in text)


# --- the page rules every backend follows (http here; chromium mirrors them) ---------------


def form_of(node):
    """The <form> that contains `node`, or None."""
    for anc in node.iterancestors():
        if anc.tag == "form":
            return anc
    return None


def default_submitter(form):
    """The button that Enter in `form` submits with: its first submit button (or None)."""
    return next(
        (b for b in form.iter("button", "input")
         if (b.tag == "button" and (b.get("type") or "submit").lower() == "submit")
         or (b.tag == "input" and (b.get("type") or "").lower() in SUBMIT_TYPES)),
        None,
    )  # fmt: skip


def link_target(node, page_url: str) -> str | None:
    """Where clicking link `node` goes (None: nowhere, e.g. `#` or `javascript:`)."""
    href = (node.get("href") or "").strip()
    if not href or href.startswith(("#", "javascript:")):
        return None
    return urljoin(page_url, href)


def check_typeable(node) -> None:
    """Raise ActionError unless text can be typed into `node`."""
    tag = node.tag
    kind = (node.get("type") or "text").lower()
    if node.get("disabled") is not None or node.get("readonly") is not None:
        raise ActionError("this field is read-only")
    if not (tag == "textarea" or (tag == "input" and kind in TEXT_INPUT_TYPES)):
        raise ActionError(f"cannot type into a <{tag}{' type=' + kind if tag == 'input' else ''}>")


def match_option(node, label: str):
    """The one <option> of dropdown `node` that `label` names (text, value, or unique part)."""
    if node.tag != "select":
        raise ActionError(f"element is a <{node.tag}>, not a dropdown (<select>)")
    opts = node.findall(".//option")
    want = norm(label).lower()
    match = [o for o in opts if norm(o.text_content()).lower() == want]
    match = match or [o for o in opts if (o.get("value") or "").lower() == want]
    match = match or [o for o in opts if want and want in norm(o.text_content()).lower()]
    if len(match) != 1 and not (match and all(m is match[0] for m in match)):
        names = " | ".join(norm(o.text_content()) for o in opts)
        raise ActionError(
            f"no single option {label[:60]!r} in this dropdown; options: {names[:200]}"
        )
    return match[0]


@dataclass
class Response:
    status: int
    url: str
    body: bytes
    content_type: str


class HttpBackend:
    """In-process backend: each session is a JS-free browser over `world`."""

    name = "http"

    def __init__(self, world: WorldApp, base_url: str):
        self.world = world
        self.base_url = base_url

    def new_session(self) -> HttpSession:
        return HttpSession(self.world, self.base_url)

    def close(self) -> None:
        pass


class HttpSession:
    """One episode's browser: state, cookies, history, current page."""

    def __init__(self, world: WorldApp, base_url: str):
        self.world = world
        self.base_url = base_url.rstrip("/")
        self._base = urlsplit(self.base_url)
        self.state = world.new_state()
        self.cookies: dict[str, str] = {}
        self.history: list[str] = []
        self.hist_index = -1
        self.url = self.base_url + "/"
        self.status = 0
        self.tree = parse_html("")
        self.focus = None  # lxml node that has keyboard focus
        self.version = 0  # bumps on every navigation (resets the scroll window)

    def close(self) -> None:
        self.state.close()

    # --- raw HTTP over WSGI --------------------------------------------------
    def _wsgi(self, method: str, url: str, body: bytes = b"", ctype: str = "") -> Response:
        parts = urlsplit(url)
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote_to_bytes(parts.path or "/").decode("latin-1"),
            "QUERY_STRING": parts.query,
            "SERVER_NAME": self._base.hostname or "localhost",
            "SERVER_PORT": str(self._base.port or 80),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": self._base.netloc,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": self._base.scheme or "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "webrl.world": self.state,
        }
        if body or method == "POST":
            environ["CONTENT_TYPE"] = ctype or "application/x-www-form-urlencoded"
            environ["CONTENT_LENGTH"] = str(len(body))
        if self.cookies:
            environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        captured: dict = {}

        def start_response(status, headers, exc_info=None):
            captured["status"] = int(status.split()[0])
            captured["headers"] = headers

        result = self.world(environ, start_response)
        try:
            data = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        headers = captured.get("headers", [])
        for key, value in headers:
            if key.lower() == "set-cookie":
                self._set_cookie(value)
        ctype_out = next((v for k, v in headers if k.lower() == "content-type"), "")
        location = next((v for k, v in headers if k.lower() == "location"), None)
        resp = Response(captured.get("status", 500), url, data, ctype_out)
        if location is not None:
            resp.url = browser_url(urljoin(url, location))
        return resp

    def _set_cookie(self, header: str) -> None:
        try:
            jar = SimpleCookie(header)
        except CookieError:
            return
        for name, morsel in jar.items():
            if morsel["max-age"] == "0" or "1970" in (morsel["expires"] or ""):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = morsel.value

    def request(self, method: str, url: str, data: dict | list | None = None) -> Response:
        """Send a request, following redirects like a browser (POST -> GET on 30x)."""
        if not self.is_local(url):
            raise ActionError(f"navigation outside the sites is blocked: {url[:100]}")
        url = browser_url(url)
        body = urlencode(data or [], doseq=True).encode() if method == "POST" else b""
        resp = self._wsgi(method, url, body)
        for _ in range(MAX_REDIRECTS):
            if resp.status not in (301, 302, 303, 307, 308) or resp.url == url and method == "GET":
                break
            url = resp.url
            if not self.is_local(url):
                raise ActionError(f"redirect outside the sites is blocked: {url[:100]}")
            if resp.status in (307, 308) and method == "POST":
                resp = self._wsgi("POST", url, body)
            else:
                method, body = "GET", b""
                resp = self._wsgi("GET", url)
        return resp

    def is_local(self, url: str) -> bool:
        p = urlsplit(url)
        return p.scheme in ("http", "https") and p.netloc == self._base.netloc

    def fetch(self, url: str) -> str:
        """GET `url` in this episode's state without touching the page or history."""
        resp = self.request("GET", url)
        return resp.body.decode("utf-8", "replace")

    # --- navigation --------------------------------------------------------------
    def _load(self, resp: Response) -> None:
        self.url = resp.url
        self.status = resp.status
        self.tree = parse_html(resp.body.decode("utf-8", "replace"))
        self.focus = None
        self.version += 1

    def navigate(self, method: str, url: str, data: list | None = None) -> None:
        resp = self.request(method, url, data)
        self._load(resp)
        del self.history[self.hist_index + 1 :]
        self.history.append(self.url)
        self.hist_index = len(self.history) - 1

    def goto(self, url: str) -> None:
        self.navigate("GET", url)

    def login(self, site: str, username: str, password: str) -> None:
        self.request("POST", f"{self.base_url}/{site}/login", [("username", username), ("password", password)])

    def go_history(self, delta: int) -> None:
        target = self.hist_index + delta
        if not 0 <= target < len(self.history):
            raise ActionError("no page to go " + ("back to" if delta < 0 else "forward to"))
        self.hist_index = target
        self._load(self.request("GET", self.history[target]))

    # --- forms -----------------------------------------------------------------------
    def _form_data(self, form, submitter=None) -> list[tuple[str, str]]:
        data: list[tuple[str, str]] = []
        for el in form.iter("input", "select", "textarea", "button"):
            name = el.get("name")
            if not name or el.get("disabled") is not None:
                continue
            if el.tag == "input":
                kind = (el.get("type") or "text").lower()
                if kind in ("checkbox", "radio"):
                    if el.get("checked") is not None:
                        data.append((name, el.get("value", "on")))
                elif kind in ("submit", "image", "button", "reset", "file"):
                    if el is submitter:
                        data.append((name, el.get("value", "")))
                else:
                    data.append((name, el.get("value", "")))
            elif el.tag == "select":
                opts = el.findall(".//option")
                chosen = [o for o in opts if o.get("selected") is not None] or opts[:1]
                for o in chosen[:1] if el.get("multiple") is None else chosen:
                    data.append((name, o.get("value", norm(o.text_content()))))
            elif el.tag == "textarea":
                data.append((name, el.text or ""))
            elif el.tag == "button" and el is submitter:
                data.append((name, el.get("value", "")))
        return data

    def submit(self, form, submitter=None) -> None:
        method = (form.get("method") or "get").upper()
        action = urljoin(self.url, form.get("action") or self.url)
        data = self._form_data(form, submitter)
        if method == "POST":
            self.navigate("POST", action, data)
        else:
            parts = urlsplit(action)
            self.navigate("GET", urlunsplit(parts._replace(query=urlencode(data), fragment="")))

    # --- actions on elements --------------------------------------------------
    def act(self, action: Action, node) -> None:
        """Carry out one action; `node` is the target element's DOM node (or None)."""
        kind = action.kind
        if kind == "Click":
            self.click(node)
        elif kind == "Type":
            self.type(node, action.argument or "")
        elif kind == "Search":
            self.type(node, action.argument or "")
            self.press_enter()
        elif kind == "Select Dropdown Option":
            self.select(node, action.argument or "")
        elif kind == "Press Enter":
            self.press_enter()
        elif kind == "Go Backward":
            self.go_history(-1)
        elif kind == "Go Forward":
            self.go_history(+1)
        else:
            raise ActionError(f"{kind} is not a browser action")

    def click(self, node) -> None:
        tag = node.tag
        kind = (node.get("type") or "").lower()
        if tag == "a":
            target = link_target(node, self.url)
            if target is not None:
                self.goto(target)
        elif tag == "button" or (tag == "input" and kind in SUBMIT_TYPES + ("button", "reset")):
            form = form_of(node)
            btype = kind or ("submit" if tag == "button" else "")
            if btype in ("button", "reset") or form is None:
                raise ActionError("this button does nothing without JavaScript")
            self.submit(form, submitter=node)
        elif tag == "input" and kind == "checkbox":
            if node.get("checked") is None:
                node.set("checked", "checked")
            else:
                del node.attrib["checked"]
        elif tag == "input" and kind == "radio":
            form = form_of(node)
            scope = form if form is not None else self.tree
            for other in scope.iter("input"):
                if other.get("name") == node.get("name") and other.get("checked") is not None:
                    del other.attrib["checked"]
            node.set("checked", "checked")
        else:
            self.focus = node  # clicking a field focuses it

    def type(self, node, text: str) -> None:
        check_typeable(node)
        if node.tag == "textarea":
            for child in list(node):
                node.remove(child)
            node.text = text
        else:
            node.set("value", text)
        self.focus = node

    def select(self, node, label: str) -> None:
        option = match_option(node, label)
        for o in node.findall(".//option"):
            if o.get("selected") is not None:
                del o.attrib["selected"]
        option.set("selected", "selected")
        self.focus = node

    def press_enter(self) -> None:
        node = self.focus
        if node is None:
            raise ActionError("nothing is focused; type into a field first")
        if node.tag == "textarea":
            node.text = (node.text or "") + "\n"
            return
        form = form_of(node)
        if form is None:
            raise ActionError("pressing Enter here does nothing")
        self.submit(form, default_submitter(form))
