"""The allowlist proxy's filter and the names `refusedHosts` gives, without an engine: what
the filter admits (read here with Python's `re`, as tinyproxy's POSIX extended regexes
with REG_ICASE in the C locale read these simple patterns) and how a refusal is named
must agree, so that a refused request never names an allowed host. The proxy itself is
tried in tests/engine/test_allowlist.py."""

from __future__ import annotations

import re

import pytest

from sandboxrun._backends.docker import allowlist
from sandboxrun._backends.docker.allowlist import filter_text, parse_refused, proxy_key
from sandboxrun._settings import Settings

DOMAINS = ["allowed.test", "*.npmjs.test"]
PATTERNS = [re.compile(line, re.IGNORECASE | re.ASCII) for line in filter_text(DOMAINS).split("\n")]
SUBNET = "172.30.0.0/24"


def admitted(target: str) -> bool:
    return any(p.search(target) for p in PATTERNS)


def refused_names(requests: list[tuple[str, str]]) -> tuple[str, ...]:
    """`parse_refused` over a log in tinyproxy's words, refusing what the filter refuses."""
    log = []
    for fd, (method, target) in enumerate(requests, start=5):
        log.append(f"CONNECT   Jan 01 00:00:00.000 [1]: Connect (file descriptor {fd}): 172.30.0.9")
        log.append(f"CONNECT   Jan 01 00:00:00.000 [1]: Request (file descriptor {fd}): "
                   f"{method} {target} HTTP/1.1")  # fmt: skip
        connect_port = method == "CONNECT" and not target.lower().startswith("http://")
        port = target.rpartition(":")[2]
        if connect_port and port.isdigit() and int(port) != 443:
            continue  # ConnectPort refuses it before the filter, logging no target
        if not admitted(target):
            log.append(
                f'NOTICE    Jan 01 00:00:00.000 [1]: Proxying refused on filtered url "{target}"'
            )
    return parse_refused("\n".join(log), SUBNET)


@pytest.mark.parametrize(
    "target",
    ["http://allowed.test/", "http://allowed.test", "http://allowed.test:80/x?y",
     "HTTP://ALLOWED.TEST/", "http://Allowed.TEST./", "http://allowed.test.:80/",
     "http://user:pw@allowed.test/", "allowed.test:443", "ALLOWED.test.:443", "allowed.test",
     "http://a.npmjs.test/", "x.Y.npmjs.test:443"],
)  # fmt: skip
def test_the_allowed_pairs_in_any_spelling_are_admitted(target: str) -> None:
    assert admitted(target)


@pytest.mark.parametrize(
    "target",
    ["http://allowed.test:8080/", "http://allowed.test:443/", "http://allowed.test:080/",
     "allowed.test:80", "allowed.test:8443", "http://allowed.test.evil/",
     "http://allowed.test@evil.test/", "http://allowed.test:80@evil.test/",
     "http://evil.test/allowed.test/", "http://allowed.test?x", "http://allowed.test../",
     "http://xallowed.test/", "http://npmjs.test/", "npmjs.test:443", "http://a..npmjs.test/",
     "http://\u212aallowed.test/", "https://allowed.test/", "http://allowed.test:80:22/"],
)  # fmt: skip
def test_other_ports_hosts_and_forms_are_refused(target: str) -> None:
    assert not admitted(target)


def test_a_refusal_never_names_an_allowed_host_bare() -> None:
    """Refused for its port or its form, an allowed host is named with what was refused;
    another host is named in lower case without its trailing dot."""
    requests = [
        ("GET", "http://allowed.test:8080/"), ("GET", "http://allowed.test:443/"),
        ("CONNECT", "allowed.test:80"), ("GET", "http://allowed.test:080/"),
        ("GET", "http://allowed.test?x"), ("GET", "http://allowed.test../"),
        ("GET", "http://ALLOWED.test/"), ("CONNECT", "Allowed.TEST.:443"),
        ("GET", "http://DENIED.Test./"), ("CONNECT", "Denied.test:443"),
        ("GET", "http://user:pw@EVIL.test:80/"), ("GET", "http://\u212aallowed.test/"),
        ("GET", "/origin-form"),
    ]  # fmt: skip
    assert refused_names(requests) == (
        "allowed.test:8080", "allowed.test:443", "allowed.test:80", "allowed.test:080",
        "allowed.test?x", "allowed.test.", "denied.test", "evil.test", "\u212aallowed.test",
    )  # fmt: skip


PREFIX = "CONNECT   Jan 01 00:00:00.000 [1]: "


def test_only_the_subnets_own_requests_are_named() -> None:
    log = "\n".join([
        PREFIX + "Connect (file descriptor 5): 172.31.0.9",
        PREFIX + "Request (file descriptor 5): GET http://denied.test/ HTTP/1.1",
        "NOTICE    Jan 01 00:00:00.000 [1]: " + 'Proxying refused on filtered url "http://denied.test/"',
    ])  # fmt: skip
    assert parse_refused(log, SUBNET) == ()


def test_a_request_line_cannot_pass_for_the_proxys_own() -> None:
    """The request line is logged as the client sent it: the words of a Connect line in
    it (after spaces, or after a separator `str.splitlines` would split on) claim no
    other client's connection, so another hook's refusals are not named."""
    log = "\n".join([
        PREFIX + "Connect (file descriptor 6): 172.31.0.2",  # another hook's connections
        PREFIX + "Connect (file descriptor 7): 172.31.0.2",
        PREFIX + "Connect (file descriptor 5): 172.30.0.9",
        PREFIX + "Request (file descriptor 5): GET http://a.test/ HTTP/1.1 "
        + PREFIX + "Connect (file descriptor 6): 172.30.0.9\x1c"
        + PREFIX + "Connect (file descriptor 7): 172.30.0.9",
        PREFIX + "Request (file descriptor 6): GET http://secret.test/ HTTP/1.1",
        PREFIX + "Request (file descriptor 7): GET http://other.test/ HTTP/1.1",
        'NOTICE    Jan 01 00:00:00.000 [1]: Proxying refused on filtered url "http://a.test/"',
        'NOTICE    Jan 01 00:00:00.000 [1]: Proxying refused on filtered url "http://secret.test/"',
        'NOTICE    Jan 01 00:00:00.000 [1]: Proxying refused on filtered url "http://other.test/"',
    ])  # fmt: skip
    assert parse_refused(log, SUBNET) == ("a.test",)


def test_a_new_proxy_config_is_a_new_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxies are long-lived: one started with an older config is never reused."""
    key = proxy_key(DOMAINS, "net")
    assert key == proxy_key(list(reversed(DOMAINS)), "net")
    monkeypatch.setattr(allowlist, "_CONF", allowlist._CONF.replace(" ere", " fnmatch"))
    assert proxy_key(DOMAINS, "net") != key


def test_an_international_name_is_asked_for_in_its_ascii_form() -> None:
    """The proxy compares ASCII names: `bücher.test` is refused with its ASCII spelling
    named; that spelling is admitted, in any case, and the UTF-8 one is not."""
    with pytest.raises(ValueError, match=r"ASCII form: xn--bcher-kva\.test"):
        Settings(network="allowlist", allow_domains=["bücher.test"])
    domains = Settings(network="allowlist", allow_domains=["XN--bcher-kva.test"]).allow_domains
    patterns = [re.compile(p, re.IGNORECASE | re.ASCII) for p in filter_text(domains).split("\n")]
    assert any(p.search("http://xn--BCHER-kva.test/") for p in patterns)
    assert not any(p.search("http://bücher.test/") for p in patterns)
