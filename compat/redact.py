"""`--redact`: remove what identifies a machine or a person from a report before it is pasted into an issue.

Removed: the host name (and its short form), user names in home-directory paths (`/home/alice`, `/Users/alice`,
`C:\\Users\\alice`), the current user's name, GPU UUIDs (`GPU-…`, `MIG-…`), serial numbers (values under keys named
like `serial`), MAC addresses, IPv4 addresses other than loopback and machine IDs. Kept: versions, GPU models,
driver and CUDA numbers, sizes — everything a maintainer needs to reproduce the stack.

Works on JSON-like documents (values are redacted, keys kept, structure unchanged) and on plain text.
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from compat.facts import host_name

_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_BARE_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HOME = re.compile(r"(?P<pre>/home/|/Users/|[A-Za-z]:\\Users\\|[A-Za-z]:/Users/)(?P<user>[^/\\\s\"':]+)")
_MAC = re.compile(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b")
_IPV4 = re.compile(r"\b(?!127\.)(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")
_SECRET_KEYS = re.compile(r"serial|uuid|hostname|host_name|^host$|^node$|machine_id|board_id", re.IGNORECASE)

USER = "<user>"
HOST = "<host>"


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
    # Short names ("a", "root") would redact half the report; a user named like a common word stays.
    users = {u for u in users if len(u) >= 3 and u not in ("root", "user", "runner", "ubuntu")}
    hosts = {h for h in hosts if len(h) >= 3 and h not in ("localhost",)}
    return sorted(hosts, key=len, reverse=True), sorted(users, key=len, reverse=True)


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
        s = _UUID.sub(lambda m: f"{m.group(1)}-<uuid>", s)
        s = _BARE_UUID.sub("<uuid>", s)
        s = _HOME.sub(lambda m: m.group("pre") + USER, s)
        s = _MAC.sub("<mac>", s)
        s = _IPV4.sub("<ip>", s)
        if self._host_re is not None:
            s = self._host_re.sub(HOST, s)
        if self._user_re is not None:
            s = self._user_re.sub(USER, s)
        return s

    def document(self, doc: Any, key: str = "") -> Any:
        """A copy of `doc` with every string value redacted and identifying fields replaced."""
        if isinstance(doc, Mapping):
            return {k: self.document(v, str(k)) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self.document(v, key) for v in doc]
        if isinstance(doc, tuple):
            return tuple(self.document(v, key) for v in doc)
        if isinstance(doc, str):
            if key and _SECRET_KEYS.search(key) and doc:
                return "<redacted>"
            return self.text(doc)
        if key and _SECRET_KEYS.search(key) and isinstance(doc, int) and not isinstance(doc, bool):
            return "<redacted>"
        return doc


def redact_text(s: str) -> str:
    return Redactor().text(s)


def redact_document(doc: Any) -> Any:
    return Redactor().document(doc)
