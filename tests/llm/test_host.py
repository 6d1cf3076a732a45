"""ragworkbook.llm.host: the server address (a bad OLLAMA_HOST named), what is local, and requests to a
local server that never go through a proxy, whatever the environment says."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest
from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama
from fakes.proxy import PROXY_VARIABLES, LoggingProxy

from ragworkbook.llm.host import client_options, is_local, ollama_host, ollama_models, open_url
from ragworkbook.llm.ollama_backend import OllamaGenerator

pytestmark = pytest.mark.usefixtures("clean_env")


@pytest.fixture()
def proxied(monkeypatch):
    with LoggingProxy() as proxy:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, proxy.url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        yield proxy


@pytest.mark.parametrize("url,local", [
    ("http://127.0.0.1:11434", True), ("http://127.8.9.10:1", True), ("http://localhost:11434", True),
    ("http://ollama.localhost:80", True), ("http://[::1]:11434", True), ("http://0.0.0.0:11434", True),
    ("http://[::ffff:127.0.0.1]:11434", True), ("127.0.0.1:11434", True),
    ("http://10.0.0.5:11434", False), ("https://ollama.example.com:443", False),
    ("http://[2001:db8::1]:1", False),
])
def test_what_is_local(url, local):
    assert is_local(url) is local
    assert client_options(url) == ({"trust_env": False} if local else {})


@pytest.mark.parametrize("value,said", [
    ("127.0.0.1:99999", "port out of range 0-65535"), ("host:port", "port could not be cast to integer"),
    ("gopher://127.0.0.1", "unknown scheme 'gopher'"),
])
def test_a_bad_ollama_host_names_the_variable(monkeypatch, value, said):
    monkeypatch.setenv("OLLAMA_HOST", value)
    with pytest.raises(ValueError, match=rf"^OLLAMA_HOST='{value}' is not an Ollama server address \({said}"):
        ollama_host()
    with pytest.raises(ValueError, match=rf"^host='{value}' is not an Ollama server address"):
        ollama_host(value)


def test_a_local_server_is_reached_directly_with_a_proxy_set(proxied):
    with FaultyOllama() as server:
        with pytest.raises(OSError):  # the environment's proxy is live: plain urllib goes through it
            urllib.request.build_opener().open(server.url + "/api/tags", timeout=5)  # reads the proxy now
        assert len(proxied.received) == 1
        proxied.received.clear()
        assert ollama_models(server.url) == [FAKE_MODEL]  # the probe
        with open_url(server.url + "/api/version", 5) as resp:
            assert b"faulty" in resp.read()
        gen = OllamaGenerator(FAKE_MODEL, host=server.url, timeout=30)
        assert gen.chat("Reply OK.").text == "OK"  # sync client
        assert gen.list_models() == [FAKE_MODEL]
        assert asyncio.run(gen.achat("Reply OK.")).text == "OK"  # async client
        assert len(server.requests) == 2 and proxied.received == []
