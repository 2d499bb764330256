"""A ticketing platform's own checkout, embedding Boxoffice's seat map.

It plays the platform: its buyers sign in here (a name is enough for the example), this
server mints each one a Boxoffice user token (an HS256 JWT signed with the Boxoffice
server's BOXOFFICE_JWT_SECRET, never shown in a URL), and its page puts
<boxoffice-seat-map> in its own checkout, from selection to order. The Boxoffice server
must name this server's origin in BOXOFFICE_ALLOWED_ORIGINS.

    python3 examples/embed/shop.py --boxoffice http://127.0.0.1:3000 \
        --secret "$BOXOFFICE_JWT_SECRET" --event <event id> [--port 8080]

Python's standard library only.
"""
import argparse
import base64
import hashlib
import hmac
import html
import http.cookies
import json
import secrets
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

PAGE = (Path(__file__).parent / "index.html").read_text()
SESSIONS = {}  # this shop's own session cookie -> its buyer's name


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def user_token(secret: str, user: str, ttl: int = 3600) -> str:
    """A Boxoffice user token for `user`: HS256, `sub` and `exp`."""
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": user, "exp": int(time.time()) + ttl}).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def handler(args):
    class Shop(BaseHTTPRequestHandler):
        def buyer(self):
            cookie = http.cookies.SimpleCookie(self.headers.get("cookie", ""))
            session = cookie.get("shop_session")
            return SESSIONS.get(session.value) if session else None

        def send(self, status, body, kind="text/html; charset=utf-8", headers=()):
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.send_header("cache-control", "no-store")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/token":
                # The platform's page asks its own server for the buyer's token.
                user = self.buyer()
                if not user:
                    return self.send(401, json.dumps({"error": "sign in first"}), "application/json")
                return self.send(200, json.dumps({"token": user_token(args.secret, user)}), "application/json")
            if self.path != "/":
                return self.send(404, "not found", "text/plain")
            user = self.buyer()
            page = (PAGE.replace("{{BOXOFFICE}}", html.escape(args.boxoffice))
                        .replace("{{EVENT}}", html.escape(args.event))
                        .replace("{{USER}}", html.escape(user or ""))
                        .replace("{{SIGNED_IN}}", "true" if user else "false"))
            return self.send(200, page)

        def do_POST(self):
            if self.path != "/sign-in":
                return self.send(404, "not found", "text/plain")
            form = parse_qs(self.rfile.read(int(self.headers.get("content-length", 0))).decode())
            name = (form.get("name") or [""])[0].strip()[:64]
            if not name:
                return self.send(303, "", headers=[("location", "/")])
            session = secrets.token_urlsafe(24)
            SESSIONS[session] = "shop-" + name
            return self.send(303, "", headers=[("location", "/"),
                                               ("set-cookie", f"shop_session={session}; HttpOnly; SameSite=Lax; Path=/")])

        def log_message(self, *_):
            pass

    return Shop


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxoffice", required=True, help="the Boxoffice server's base URL")
    parser.add_argument("--secret", required=True, help="the Boxoffice server's BOXOFFICE_JWT_SECRET")
    parser.add_argument("--event", required=True, help="the event on sale")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(args))
    print(f"shop on http://127.0.0.1:{args.port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
