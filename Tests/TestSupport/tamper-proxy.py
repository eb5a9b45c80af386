#!/usr/bin/env python3
"""A man in the middle for EntitleKit's tests: forwards each request (GET, POST) to Entitle and answers
what Entitle answered, changed as told. --mode flip changes one byte of the body (in the
middle, keeping the headers, signature included); --mode replay answers every request after
the first with the first answer, signature and all; --mode not-modified asks Entitle, for a
request that names a kept answer (If-None-Match), whether anything at all is current (`*`), so
a changed customer is answered 304 as if the kept one still were. Writes its port to --port-file."""
import argparse, http.client, http.server

parser = argparse.ArgumentParser()
parser.add_argument("--upstream-port", type=int, required=True)
parser.add_argument("--mode", choices=["flip", "replay", "not-modified"], required=True)
parser.add_argument("--port-file", required=True)
options = parser.parse_args()
first = []

class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.forward(b"")

    def do_POST(self):
        self.forward(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

    def forward(self, request_body):
        if options.mode == "replay" and first:
            status, headers, body = first[0]
        else:
            connection = http.client.HTTPConnection("127.0.0.1", options.upstream_port, timeout=10)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            if options.mode == "not-modified":
                headers = {k: ("*" if k.lower() == "if-none-match" else v) for k, v in headers.items()}
            connection.request(self.command, self.path, body=request_body or None, headers=headers)
            response = connection.getresponse()
            status, headers, body = response.status, response.getheaders(), response.read()
            first.append((status, headers, body))
            if options.mode == "flip" and body:
                middle = len(body) // 2
                body = body[:middle] + bytes([body[middle] ^ 0x01]) + body[middle + 1:]
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "date", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
with open(options.port_file, "w") as file:
    file.write(str(server.server_address[1]))
server.serve_forever()
