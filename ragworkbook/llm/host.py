"""Where the Ollama server is, how long to wait for it, and how to reach a local server without a proxy.

- :func:`ollama_host`: the server URL from ``host=`` or ``$OLLAMA_HOST``, normalised as the
  ``ollama`` client does (no scheme: http; no port: 11434, or 80/443 for an explicit
  http/https scheme; nothing: ``http://127.0.0.1:11434``). A value that is no address (a port
  out of range, a port that is not a number) is a ValueError naming the variable.
- :func:`ollama_timeout`: seconds to wait (``timeout=``, else ``$RAGWORKBOOK_OLLAMA_TIMEOUT``,
  else 300).
- :func:`is_local`: whether a server URL is on this machine, decided by address, not by
  spelling: the host name is resolved (``127.1``, ``2130706433``, ``0x7f.1``, ``localhost.``
  and the machine's own host name all name this machine) and every address it resolves to must
  be a loopback address, the unspecified address (``0.0.0.0`` / ``::``) or one of this
  machine's own addresses. Requests to a local server never go
  through a proxy, whatever ``http_proxy`` / ``HTTP_PROXY`` say: a proxy would see every
  prompt and answer, and cannot reach this machine's loopback anyway (Ollama's own client
  bypasses proxies for loopback too). :func:`client_options` gives the ``ollama`` client
  (httpx) that setting; :func:`open_url` does the same for plain ``urllib`` requests (the
  probe of ``GET /api/tags``). A remote server is reached as the environment says (through
  the proxy, unless ``NO_PROXY`` names it).
- :func:`ollama_models` / :func:`ollama_available`: the probe itself.
- :func:`seconds_setting` (a timeout from an argument or an environment variable),
  :func:`redact_url` (a server URL without the credentials it may hold) and
  :func:`redact_text` (any message with the credentials of the URLs and keys in it hidden)
  serve every backend that talks to a server.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import socket
import urllib.parse
import urllib.request
from typing import IO

from ragworkbook._validate import seconds_setting

__all__ = ["DEFAULT_OLLAMA_HOST", "DEFAULT_OLLAMA_TIMEOUT", "ollama_host", "ollama_timeout", "is_local",
           "client_options", "open_url", "ollama_models", "ollama_available", "seconds_setting",
           "redact_url", "redact_text"]

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_TIMEOUT = 300.0
_EXAMPLE = "e.g. 127.0.0.1:11434 or http://127.0.0.1:11434"


def ollama_host(host: str | None = None) -> str:
    """The Ollama server URL for ``host`` (default ``$OLLAMA_HOST``), normalised like the ``ollama`` client.

    No scheme means http; no port means 11434 (80/443 for an explicit http/https
    scheme); nothing at all means ``http://127.0.0.1:11434``. ValueError naming
    ``OLLAMA_HOST`` (or ``host``) when the value is not a server address.
    """
    from_env = host is None
    raw = (os.environ.get("OLLAMA_HOST", "") if from_env else host).strip()
    port = 11434
    scheme, _, hostport = raw.partition("://")
    if not hostport:
        scheme, hostport = "http", raw
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    else:
        raise ValueError(_bad_host(raw, from_env, f"unknown scheme {scheme!r}; use http or https"))
    split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
    try:
        given_port = split.port
    except ValueError as exc:  # "Port out of range 0-65535", "Port could not be cast to integer ..."
        raise ValueError(_bad_host(raw, from_env, str(exc).lower())) from None
    name = split.hostname or "127.0.0.1"
    port = given_port or port
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def _bad_host(raw: str, from_env: bool, why: str) -> str:
    raw = redact_text(raw)
    what = f"OLLAMA_HOST={raw!r}" if from_env else f"host={raw!r}"
    fix = "set OLLAMA_HOST to" if from_env else "give"
    return f"{what} is not an Ollama server address ({why}): {fix} host:port or a URL, {_EXAMPLE}"


def ollama_timeout(timeout: float | None = None) -> float:
    """Seconds to wait for the Ollama server: ``timeout``, else ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else 300.

    The wait bounds connecting and each read (each chunk of a streamed answer).
    ValueError when the value is not a positive number of seconds.
    """
    return seconds_setting(timeout, "RAGWORKBOOK_OLLAMA_TIMEOUT", DEFAULT_OLLAMA_TIMEOUT)


def redact_url(url: str) -> str:
    """``url`` fit to be shown: a user name or password in it becomes ``***``, and so does a query
    (where some gateways take a key)."""
    split = urllib.parse.urlsplit(url)
    netloc = split.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((split.scheme, netloc, split.path, "***" if split.query else "",
                                    split.fragment))


#: user info of a URL (``scheme://user:password@``), or ``user:password@host`` without a scheme
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/@'\"<>]*@|(?<![\w/])[^\s/@'\"<>:]+:[^\s/@'\"<>]*@")
#: a key in a query or an option: ``key=...``, ``api_key=...``, ``token=...``, ``password=...``
_KEYS = re.compile(r"(?i)\b(api[_-]?key|key|token|access[_-]?token|password|passwd|secret)=([^&\s'\"]+)")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]+")


def redact_text(text: str) -> str:
    """``text`` with credentials hidden: the user and password of every URL in it (``***@``), keys and
    tokens given as ``key=...`` (``key=***``) and bearer tokens. For messages and settings shown to the
    user; the values themselves are never changed."""
    text = _USERINFO.sub(lambda m: (m.group("scheme") or "") + "***@", text)
    text = _KEYS.sub(lambda m: f"{m.group(1)}=***", text)
    return _BEARER.sub(lambda m: f"{m.group(1)} ***", text)


def _host_name(url: str) -> str:
    try:
        name = urllib.parse.urlsplit(url if "://" in url else f"http://{url}").hostname or ""
    except ValueError:
        return ""
    return name.lower().rstrip(".")


@functools.lru_cache(maxsize=64)
def _own_address(addr: str) -> bool:
    """Whether ``addr`` is an address of this machine: a socket can be bound to it."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.bind((addr, 0))
    except OSError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _resolves_local(name: str) -> bool:
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addrs = {info[4][0] for info in infos}
    return bool(addrs) and all(_address_local(a) for a in addrs)


def _address_local(text: str) -> bool:
    try:
        addr = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    if mapped is not None:
        addr = mapped
    return addr.is_loopback or addr.is_unspecified or _own_address(str(addr))


def is_local(url: str) -> bool:
    """Whether the server at ``url`` is on this machine, by address: ``localhost`` (or a ``*.localhost``
    name, a trailing dot allowed), else every address the host name resolves to is a loopback address
    (``127.0.0.0/8``, ``::1``, IPv4-mapped loopback), ``0.0.0.0`` / ``::`` or an address of this machine.
    So ``127.1``, ``2130706433``, ``0x7f.1`` and the machine's own host name are local; a name that
    does not resolve is not."""
    name = _host_name(url)
    if not name:
        return False
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return _address_local(str(ipaddress.ip_address(name.strip("[]"))))
    except ValueError:
        pass
    return _resolves_local(name)


def client_options(url: str) -> dict[str, bool]:
    """Extra arguments for the ``ollama`` client (passed on to httpx) to reach ``url``: for a local
    server ``trust_env=False``, so that no ``*_proxy`` variable routes the requests through a proxy."""
    return {"trust_env": False} if is_local(url) else {}


def open_url(url: str, timeout: float) -> IO[bytes]:
    """``urllib.request.urlopen(url)``, through no proxy when ``url`` is local (see :func:`is_local`)."""
    if is_local(url):
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return opener.open(url, timeout=timeout)
    return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - the user's own server


def ollama_models(host: str | None = None, timeout: float = 0.5) -> list[str] | None:
    """Models pulled on the Ollama server at ``host`` (``GET /api/tags``), or None if no server answers."""
    url = (host or ollama_host()).rstrip("/") + "/api/tags"
    try:
        with open_url(url, timeout) as resp:
            tags = json.loads(resp.read() or b"{}")
    except (OSError, ValueError):
        return None
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        return None
    return sorted(str(m.get("model") or m.get("name") or "") for m in tags["models"] if isinstance(m, dict))


def ollama_available(host: str | None = None, timeout: float = 0.5) -> bool:
    """Whether an Ollama server answers ``GET /api/tags`` at ``host`` (default :func:`ollama_host`)."""
    return ollama_models(host, timeout) is not None
