#!/usr/bin/env python3
"""A TLS client of hkd's protocol in Python's standard library alone: TLS (verifying the server against a CA
file and a host name), then the handshake of Protocol/PROTOCOL.md (hello, challenge, proof, welcome with the
server's signature checked), then ping and pong. Prints one line, `pong <nonce> over <TLS version>`, and exits
0; on any mismatch it prints the reason and exits 1.

Usage: tls_ping.py HOST PORT CA_FILE SERVER_NAME TOKEN
"""
import hashlib
import hmac
import os
import socket
import ssl
import struct
import sys

MAGIC = b"HK"
HELLO, WELCOME, ERROR, PING, PONG, CHALLENGE, PROOF = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07


def frame(kind, payload, request_id=0):
    return MAGIC + bytes([1, kind, 0, 0, 0, 0]) + struct.pack("<II", request_id, len(payload)) + payload


def read_exact(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise SystemExit("the server closed the connection")
        data += chunk
    return data


def read_frame(conn):
    header = read_exact(conn, 16)
    if header[:2] != MAGIC or header[4] != 0:
        raise SystemExit("unexpected frame header %r" % header)
    request_id, length = struct.unpack("<II", header[8:16])
    if length > 1 << 20:
        raise SystemExit("frame too long: %d" % length)
    return header[3], request_id, read_exact(conn, length)


def varint(value):
    out = b""
    while True:
        byte = value & 0x7F
        value >>= 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def main():
    host, port, ca_file, server_name, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    _, id_hex, secret_hex = token.split("_")
    token_id, secret = int(id_hex, 16), bytes.fromhex(secret_hex)
    context = ssl.create_default_context(cafile=ca_file)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection((host, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=server_name) as conn:
            name = b"tls_ping.py"
            nonce = os.urandom(32)
            hello = bytes([2]) + varint(len(name)) + name + struct.pack("<I", token_id) + varint(32) + nonce
            conn.sendall(frame(HELLO, hello))
            kind, _, challenge = read_frame(conn)
            if kind != CHALLENGE:
                raise SystemExit("expected a challenge, got kind %d: %r" % (kind, challenge))
            salt = challenge[34 : 34 + challenge[33]]
            auth = b"hkd-auth-1" + struct.pack("<I", len(hello)) + hello + struct.pack("<I", len(challenge)) + challenge
            mac = lambda key, message: hmac.new(key, message, hashlib.sha256).digest()
            salted = hashlib.sha256(salt + secret).digest()
            client_key = mac(salted, b"Client Key")
            stored_key = hashlib.sha256(client_key).digest()
            proof = bytes(a ^ b for a, b in zip(client_key, mac(stored_key, auth)))
            conn.sendall(frame(PROOF, proof))
            kind, _, welcome = read_frame(conn)
            if kind != WELCOME:
                raise SystemExit("expected a welcome, got kind %d: %r" % (kind, welcome))
            expected = mac(mac(salted, b"Server Key"), auth)
            if welcome[-33:] != bytes([32]) + expected:
                raise SystemExit("the welcome's server signature is wrong")
            ping_nonce = int.from_bytes(os.urandom(8), "little")
            conn.sendall(frame(PING, struct.pack("<Q", ping_nonce), request_id=7))
            kind, request_id, pong = read_frame(conn)
            if kind != PONG or request_id != 7 or struct.unpack("<Q", pong)[0] != ping_nonce:
                raise SystemExit("expected pong 7 with the nonce, got kind %d id %d %r" % (kind, request_id, pong))
            print("pong %d over %s" % (ping_nonce, conn.version()))


if __name__ == "__main__":
    main()
