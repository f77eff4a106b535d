"""`--redact`: remove credentials and what identifies a machine or a person from a report before it is shared.

One function for every output: `Redactor.text` rewrites a string, `Redactor.document` walks a JSON-like document and
rewrites every string in it (values, keys, list items), so a field added tomorrow is covered without a list of keys.
What is removed and what is kept is stated in the README ("What `--redact` removes") and pinned by
tests/redact/test_corpus.py. Every pattern is linear: a quantifier that can fail after it is bounded and starts only
at the beginning of a run of its characters, so a 1 MB hostile line costs one pass, never a quadratic scan.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from compat.facts import host_name

USER = "<user>"
HOST = "<host>"
SECRET = "<redacted>"

# Credential names: `HF_TOKEN`, `--password`, `aws_secret_access_key`, `"apiKey"`, `serial number`... A name must
# end the word or be followed by a separator or a capital (`tokenizers=0.15`, `author=` are not credentials).
_NAME = (
    r"(?i:token|secret|passw(?:or)?d|passphrase|pwd|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credentials?|auth|cookie|session[_-]?id|serial(?:[ _-]?(?:number|no))?)(?![a-z])"
)
_KEY = r"[\w.-]{0,40}?" + _NAME + r"[\w.-]{0,40}"
_VALUE = r"""(?P<v>\\?"[^"\n]{0,1024}"|\\?'[^'\n]{0,1024}'|\\?["']?[^\s"'&;,<>]+)"""
# KEY=VALUE, KEY: VALUE, "KEY": "VALUE", --KEY=VALUE.
_ASSIGN = re.compile(r"(?<![\w.-])(?P<k>" + _KEY + r"""\\?["']?[ \t]{0,40}[=:][ \t]{0,8})""" + _VALUE)
# --KEY VALUE (a command line): only for a flag, so "the password is wrong" keeps its words.
_FLAG = re.compile(r"(?<![\w.-])(?P<k>--?" + _KEY + r"[ \t]{1,8})(?!-)" + _VALUE)
# One argument naming a credential, its value in the next one: `--password X`, `AWS_SECRET_ACCESS_KEY X`.
_PAIR_KEY = re.compile(r"(?:--?)?" + _KEY + r"[:=]?|(?i:(?:proxy-)?authorization:?)")
_SCHEME = re.compile(r"(?i:bearer|basic|token|digest|negotiate)")
_AUTH = re.compile(
    r"(?i)(?P<k>\b(?:proxy-)?authorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?"
    r"(?:(?:bearer|basic|token|digest|negotiate)[ \t]{1,8})?)"
    r"(?P<v>(?!(?:bearer|basic|token|digest|negotiate)[ \t])[^\s\"',;<>]+)"
)
_BEARER = re.compile(r"(?i)(?P<k>\bbearer[ \t]{1,8})(?P<v>[A-Za-z0-9._~+/=-]{8,})")
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<k>[A-Za-z][A-Za-z0-9+.-]{0,30}://)[^\s/?#@<>\"']{1,512}@")
# Token shapes whose prefix says what they are: the prefix stays (it tells a maintainer which credential it was).
_TOKENS = re.compile(
    r"(?<![\w-])(?P<k>hf_|gh[pousr]_|github_pat_|glpat-|npm_|xox[abposr]-|sk-(?:proj-|ant-)?|[sr]k_(?:live|test)_"
    r"|AIza)(?P<v>[A-Za-z0-9_-]{10,})"
)
_AWS_ID = re.compile(
    r"(?<![A-Za-z0-9])(?P<k>A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA))[A-Z0-9]{16}(?![A-Za-z0-9])"
)
_AWS_SECRET = re.compile(
    r"(?i:(?<![\w.-])(?P<k>[\w.-]{0,20}?aws[\w.-]{0,20}?secret[\w.-]{0,30}[\"' \t:=]{1,12}))"
    r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)
_JWT = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----")
_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"
)
_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_BARE_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HOME = re.compile(r"(?P<pre>/home/|/Users/|[A-Za-z]:\\Users\\|[A-Za-z]:/Users/)(?P<user>[^/\\\s\"':<>]+)")
_MAC = re.compile(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b")
_IP_HOST = re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\b")
_IPV4 = re.compile(r"\b(?!127\.)(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")
# After a colon too: NCCL writes `ib0:fe80::a00:27ff:fe4e:66a1%ib0`.
_IPV6 = re.compile(r"(?<![\w.])[0-9A-Fa-f:]{2,39}(?![\w:])")
# Keys whose whole value identifies the machine or is a credential, whatever it looks like.
_SECRET_KEYS = re.compile(
    r"serial|uuid|hostname|host_name|^host$|^node$|^node_name$|machine_id|board_id|" + _NAME, re.IGNORECASE
)
_MAX_DEPTH = 200
_HOST_KEYS = re.compile(r"^(?:host|hostname|host_name|node|node_name|nodename)$", re.IGNORECASE)


def _names() -> tuple[list[str], list[str]]:
    hosts: set[str] = set()
    users: set[str] = set()
    try:
        h = host_name()  # the name the doctor reports
        if h:
            hosts.update({h, h.split(".")[0]})
    except OSError:
        pass
    for var in ("HOSTNAME",):
        if os.environ.get(var):
            hosts.add(os.environ[var])
    try:
        users.add(getpass.getuser())
    except Exception:  # noqa: BLE001 - no passwd entry (docker run -u 12345): nothing to add
        pass
    for var in ("USER", "LOGNAME", "USERNAME"):
        if os.environ.get(var):
            users.add(os.environ[var])
    return _usable_hosts(hosts), sorted(_usable_users(users), key=len, reverse=True)


def _usable_users(users: Iterable[str]) -> set[str]:
    # Short names ("a", "root") would redact half the report; a user named like a common word stays.
    return {u for u in users if len(u) >= 3 and u not in ("root", "user", "runner", "ubuntu")}


def _usable_hosts(hosts: Iterable[str]) -> list[str]:
    found = {h for h in hosts if len(h) >= 3 and h not in ("localhost",) and not h.startswith("<")}
    return sorted(found, key=len, reverse=True)


def _sub_value(m: re.Match[str]) -> str:
    v = m.group("v")
    if v.strip("\"'") in ("", SECRET):
        return m.group()
    q = v[0] if v[0] in "\"'" and len(v) > 1 and v[-1] == v[0] else ""
    return m.group("k") + q + SECRET + q


def _sub_assign(m: re.Match[str]) -> str:
    return m.group() if _prose(m) else _sub_value(m)


def _prose(m: re.Match[str]) -> bool:
    """`invalid token: unexpected EOF` is prose, `token: abc` (YAML, a header, nvidia-smi's `Serial Number : 1`)
    and `"token": "abc"` are not: a `name: value` counts when the name opens its line, is quoted, is a compound
    (`x-api-key`, `HF_TOKEN`) or names a serial."""
    k = m.group("k")
    if "=" in k or ":" not in k or "serial" in k.lower() or any(c in k for c in "_-\"'"):
        return False
    before = m.string[max(0, m.start() - 200) : m.start()].rsplit("\n", 1)[-1]
    return before.strip(" \t{[,") != ""


_VERSION_BEFORE = re.compile(
    r"(?i)(?:[<>=!~]=|[<>]|\bv|version|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|tensorrt|trt|cuda|driver)"
    r"[ \t:=]{0,3}$"
)


def _sub_ipv4(m: re.Match[str]) -> str:
    """A four-part version (`nvidia-cudnn-cu12>=9.3.0.75`, `cuDNN 9.1.0.70`) is not an address."""
    if _VERSION_BEFORE.search(m.string, max(0, m.start() - 12), m.start()):
        return m.group()
    return "<ip>"


def _sub_ipv6(m: re.Match[str]) -> str:
    s = m.group()
    if s.count(":") < 2 or not any(c.isdigit() for c in s):
        return s
    try:
        ip = ipaddress.IPv6Address(s)
    except ValueError:
        return s
    return s if ip.is_loopback or ip.is_unspecified else "<ip>"


def _private_keys(s: str) -> str:
    """PEM private key blocks; one with no end (a truncated log tail) is removed to the end of the text."""
    out: list[str] = []
    pos = 0
    while True:
        b = _KEY_BEGIN.search(s, pos)
        if b is None:
            break
        e = _KEY_END.search(s, b.end())
        out += [s[pos : b.start()], "<private-key>"]
        pos = e.end() if e else len(s)
    out.append(s[pos:])
    return "".join(out)


class Redactor:
    """Redacts text and documents; the host and user names come from this machine unless given."""

    def __init__(self, hosts: Iterable[str] | None = None, users: Iterable[str] | None = None) -> None:
        found_hosts, found_users = _names()
        self.hosts = sorted(set(found_hosts if hosts is None else hosts), key=len, reverse=True)
        self.users = sorted(set(found_users if users is None else users), key=len, reverse=True)
        self._host_re = self._words(self.hosts)
        self._user_re = self._words(self.users)

    @staticmethod
    def _words(words: list[str]) -> re.Pattern[str] | None:
        if not words:
            return None
        return re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w-])")

    def text(self, s: str) -> str:
        """`s` without credentials, addresses, UUIDs, serials, host and user names (idempotent)."""
        if "PRIVATE KEY" in s:
            s = _private_keys(s)
        low = s.lower()  # each pass runs only when its anchor is present: most strings take none of them
        if "://" in s and "@" in s:
            s = _URL_USERINFO.sub(lambda m: m.group("k") + SECRET + "@", s)
        if "authorization" in low:
            s = _AUTH.sub(_sub_value, s)
        if "bearer" in low:
            s = _BEARER.sub(_sub_value, s)
        if "aws" in low:
            s = _AWS_SECRET.sub(_sub_value, s)
        if "=" in s or ":" in s:
            s = _ASSIGN.sub(_sub_assign, s)
        if "-" in s:
            s = _FLAG.sub(_sub_value, s)
        s = _TOKENS.sub(lambda m: m.group("k") + SECRET, s)
        s = _AWS_ID.sub(lambda m: m.group("k") + SECRET, s)
        if "eyJ" in s:
            s = _JWT.sub(SECRET, s)
        if "@" in s:
            s = _EMAIL.sub("<email>", s)
        if "-" in s:
            s = _UUID.sub(lambda m: f"{m.group(1)}-<uuid>", s)
            s = _BARE_UUID.sub("<uuid>", s)
        if "/home/" in s or "Users" in s:
            s = _HOME.sub(lambda m: m.group("pre") + USER, s)
        if ":" in s:
            s = _MAC.sub("<mac>", s)
        if "ip-" in s:
            s = _IP_HOST.sub("ip-<ip>", s)
        if "." in s:
            s = _IPV4.sub(_sub_ipv4, s)
        if ":" in s:
            s = _IPV6.sub(_sub_ipv6, s)
        if self._host_re is not None:
            s = self._host_re.sub(HOST, s)
        if self._user_re is not None:
            s = self._user_re.sub(USER, s)
        return s

    def document(self, doc: Any, key: str = "") -> Any:
        """A copy of `doc` with every string redacted (values, keys, list items) and identifying fields replaced.

        Host names found under host-like keys (a fleet's node names) are redacted wherever else they appear."""
        found = _usable_hosts(_host_values(doc))
        extra = [h for h in found if h not in self.hosts]
        if not extra:
            return self._walk(doc, key, 0)
        return Redactor(hosts=[*self.hosts, *extra], users=self.users)._walk(doc, key, 0)

    def _walk(self, doc: Any, key: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:  # a hostile document: what is too deep to read is dropped, never kept unread
            return SECRET
        if isinstance(doc, Mapping):
            out: dict[Any, Any] = {}
            for k, v in doc.items():
                name = self.text(k) if isinstance(k, str) else k
                while name in out:  # two keys redacted to one name: both stay
                    name = f"{name}#"
                out[name] = self._walk(v, str(k), depth + 1)
            return out
        if isinstance(doc, (list, tuple)):
            items = self._items(list(doc), key, depth)
            return tuple(items) if isinstance(doc, tuple) else items
        if isinstance(doc, str):
            if key and doc and _SECRET_KEYS.search(key):
                return SECRET
            return self.text(doc)
        if key and _SECRET_KEYS.search(key) and isinstance(doc, int) and not isinstance(doc, bool):
            return SECRET
        return doc

    def _items(self, items: list[Any], key: str, depth: int) -> list[Any]:
        """A list's items: an argument after `--password` (a command line) and the lines of a private key block
        split over list items (an output tail) are removed too."""
        out: list[Any] = []
        hide_next = in_key = False
        for item in items:
            if not isinstance(item, str):
                hide_next = False
                out.append(self._walk(item, key, depth + 1))
                continue
            if hide_next and _SCHEME.fullmatch(item):  # `Authorization:` `Bearer` X: X goes
                out.append(item)
                continue
            if in_key or hide_next:
                ends = in_key and _KEY_END.search(item) is not None
                out.append("<private-key>" if in_key else SECRET)
                in_key = in_key and not ends
                hide_next = False
                continue
            begin = _KEY_BEGIN.search(item)
            in_key = begin is not None and _KEY_END.search(item, begin.end()) is None
            hide_next = _PAIR_KEY.fullmatch(item) is not None
            out.append(self._walk(item, key, depth + 1))
        return out


def _host_values(doc: Any, key: str = "", depth: int = 0) -> Iterable[str]:
    """Strings under host-like keys, and a fleet's node names (`nodes: [{name: ...}]`, `nodes: [name, ...]`)."""
    if depth > 64:
        return
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            if isinstance(v, str) and (_HOST_KEYS.match(str(k)) or (key == "nodes" and k == "name")):
                yield v
            else:
                yield from _host_values(v, str(k), depth + 1)
    elif isinstance(doc, (list, tuple)):
        for v in doc:
            if isinstance(v, str) and key == "nodes":
                yield v
            else:
                yield from _host_values(v, key, depth + 1)


def redact_text(s: str) -> str:
    return Redactor().text(s)


def redact_document(doc: Any) -> Any:
    return Redactor().document(doc)
