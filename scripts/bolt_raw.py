"""Bolt 4.4 over raw sockets for the operations scripts (`ops_probes.py`, `idle_connections.py`,
`backup_under_load.py`): the handshake, PackStream strings, chunked messages, reading one message,
and a free port to start a server on. Raw sockets rather than a driver, so the client side stays
small and can misbehave on purpose."""
import socket, struct

HANDSHAKE = b"\x60\x60\xb0\x17" + bytes([0, 0, 4, 4]) + bytes(12)


def free_port():
    """A port the kernel says is free now (a random pick in the ephemeral range can collide with
    the client sockets of an earlier run still in TIME_WAIT: the bind then fails)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pstr(s):
    """A PackStream string of fewer than 256 bytes."""
    b = s.encode()
    if len(b) < 16:
        return bytes([0x80 | len(b)]) + b
    return b"\xd0" + bytes([len(b)]) + b


def chunked(body):
    """A Bolt message: `body` in chunks of at most 65,535 bytes, then the end marker."""
    parts = []
    for i in range(0, len(body), 65535):
        part = body[i:i + 65535]
        parts += [struct.pack(">H", len(part)), part]
    return b"".join(parts) + b"\x00\x00"


def hello(agent):
    return chunked(b"\xb1\x01\xa2" + pstr("user_agent") + pstr(agent) + pstr("scheme") + pstr("none"))


def run_msg(q):
    return chunked(b"\xb3\x10" + pstr(q) + b"\xa0\xa0")


PULL_ALL = chunked(b"\xb1\x3f\xa1" + pstr("n") + b"\xff")


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the server")
        buf += chunk
    return buf


def read_message(s):
    """The next whole message (chunks joined; no-op chunks skipped)."""
    out = b""
    while True:
        n = struct.unpack(">H", recv_exact(s, 2))[0]
        if n == 0:
            if out:
                return out
            continue
        out += recv_exact(s, n)
