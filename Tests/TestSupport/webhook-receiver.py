#!/usr/bin/env python3
"""A webhook receiver for the tests: HTTPS on loopback, verifying each delivery the way a
developer's receiver would (Standard Webhooks: HMAC-SHA256 over "{id}.{timestamp}.{body}" with the
decoded whsec_ secret, compared in constant time, timestamp within five minutes).

Each request is appended to the log as one JSON line. What it answers depends on the path:
  /ok        200
  /flaky     500 the first time an id is seen, then 200
  /gate      503 until the file named by --gate exists, then 200
  /hang      never answers (holds the connection for a minute)
  /forward   200 (forwarded Apple notifications: the raw body is logged byte for byte)
  /large     200 with a 50 MB body (a receiver that echoes a page back)

Usage: webhook-receiver.py --cert C --key K --secret whsec_... --log FILE --port-file FILE [--gate FILE]
"""
import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import ssl
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--cert", required=True)
parser.add_argument("--key", required=True)
parser.add_argument("--secret", required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--port-file", required=True)
parser.add_argument("--gate")
args = parser.parse_args()

key = base64.b64decode(args.secret[len("whsec_"):])
lock = threading.Lock()
seen = set()


def verify(headers, body):
    message_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (message_id and timestamp and signatures):
        return False
    if abs(time.time() - int(timestamp)) > 300:
        return False
    expected = base64.b64encode(
        hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
    return any(
        version == "v1" and hmac.compare_digest(signature, expected)
        for version, _, signature in (part.partition(",") for part in signatures.split(" ")))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        entry = {
            "path": self.path,
            "id": self.headers.get("webhook-id"),
            "timestamp": self.headers.get("webhook-timestamp"),
            "signatureValid": verify(self.headers, body),
            "body": body.decode("utf-8"),
            "bodyBase64": base64.b64encode(body).decode(),
            "contentType": self.headers.get("content-type"),
        }
        with lock:
            first = entry["id"] not in seen
            seen.add(entry["id"])
            with open(args.log, "a") as log:
                log.write(json.dumps(entry) + "\n")
        if self.path == "/hang":
            time.sleep(60)
            return
        status = 200
        if self.path == "/flaky" and first:
            status = 500
        if self.path == "/gate" and not os.path.exists(args.gate or ""):
            status = 503
        self.send_response(status)
        if self.path == "/large":
            size = 50 << 20
            self.send_header("content-length", str(size))
            self.end_headers()
            chunk = b"x" * (1 << 20)
            try:
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                pass  # the sender stopped reading after its limit, as it should
            return
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(args.cert, args.key)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(args.port_file + ".tmp", "w") as port_file:
    port_file.write(str(server.server_address[1]))
os.rename(args.port_file + ".tmp", args.port_file)
server.serve_forever()
