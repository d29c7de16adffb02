"""A webhook receiver that accepts everything (answers 200 to every POST) and counts what it got: the app's backend
for benchmarks of the send path with after_send configured.

    python3 scripts/e2e/lib/webhooks/sink.py --port 18080   # then: parley app webhook ak_... \\
        --url http://127.0.0.1:18080/hook --events after_send   (PARLEY_WEBHOOK_ALLOW_PRIVATE=1 for both)

Prints the number of calls received every 5 seconds. Standard library only; 127.0.0.1 only.
"""
import argparse
import http.server
import threading
import time

received = 0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        global received
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            received += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while True:
        time.sleep(5)
        with lock:
            print(f"received {received}", flush=True)


if __name__ == "__main__":
    main()
