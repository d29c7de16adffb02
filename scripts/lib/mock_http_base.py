"""What scripts/lib/mock_fcm.py and mock_hms.py share: an HTTP/1.1 server on 127.0.0.1 (keep-alive, as libcurl
reuses connections) that writes its port to --port-file once listening, records one JSON line per request, and
stops on SIGTERM."""
import json
import os
import signal
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Set by serve(): answer(method, path, headers, body) -> (status, JSON-able reply, record entry)
    answer = None
    record = None
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        with Handler.lock:
            status, reply, entry = Handler.answer(self.command, self.path, headers, body)
            entry.update({"path": self.path, "status": status, "reply": reply})
            Handler.record.write(json.dumps(entry) + "\n")
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST


def form(body):
    """A form body as a dict of its first values."""
    return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(errors="replace"), keep_blank_values=True).items()}


def serve(port_file, record_path, answer):
    Handler.answer = staticmethod(answer)
    Handler.record = open(record_path, "a", buffering=1)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()
