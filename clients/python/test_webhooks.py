"""Webhooks of `jility serve`, checked by a receiver built on the Standard Webhooks
reference library (`standardwebhooks` from PyPI): every delivery verifies with the
subscription's secret, a tampered one does not, and a rotated secret still verifies while
it is kept."""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from harness import api_request, make


class Receiver:
    """An HTTP receiver on loopback keeping every request's headers and body."""

    def __init__(self) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, count: int, seconds: float = 30) -> list[tuple[dict[str, str], bytes]]:
        deadline = time.monotonic() + seconds
        while len(self.got) < count:
            assert time.monotonic() < deadline, f"{len(self.got)} of {count} deliveries came"
            time.sleep(0.05)
        return list(self.got)


def test_deliveries_verify_with_the_standard_webhooks_library(tmp_path: Path) -> None:
    server = make("jility-cloud", tmp_path, "")
    receiver = Receiver()
    try:
        status, made = api_request(server, "POST", "/webhooks", {"url": receiver.url, "events": ["ticket.created", "ticket.commented"]})
        assert status == 201, made
        secret = made["secret"]
        assert secret.startswith("whsec_")
        status, ticket = api_request(server, "POST", "/tickets", {"title": "Signed for"})
        assert status == 201, ticket
        number = ticket["ticket"]["number"]
        status, _ = api_request(server, "POST", f"/tickets/{number}/comments", {"content": "hello"})
        assert status in (200, 201)
        status, _ = api_request(server, "POST", f"/tickets/{number}/status", {"status": "todo"})
        assert status == 200
        got = receiver.wait(2)
        time.sleep(1)
        assert len(receiver.got) == 2, "an event not subscribed to was delivered"
        hook = Webhook(secret)
        types = []
        for headers, body in got:
            event = hook.verify(body, headers)
            types.append(event["type"])
            assert event["data"]["ticket"]["number"] == number
            # A byte changed, or another secret: refused.
            try:
                hook.verify(body.replace(b"Signed", b"Forged"), headers)
                raise AssertionError("a tampered body verified")
            except WebhookVerificationError:
                pass
            try:
                Webhook("whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB").verify(body, headers)
                raise AssertionError("another secret verified")
            except WebhookVerificationError:
                pass
        assert types == ["ticket.created", "ticket.commented"]

        # Rotated, keeping the old secret: both verify the next delivery.
        status, rotated = api_request(server, "POST", f"/webhooks/{made['id']}/rotate-secret", {"keep_previous_hours": 1})
        assert status == 200, rotated
        status, _ = api_request(server, "POST", f"/webhooks/{made['id']}/test")
        assert status == 202
        headers, body = receiver.wait(3)[2]
        assert Webhook(rotated["secret"]).verify(body, headers)["type"] == "webhook.test"
        assert Webhook(secret).verify(body, headers)["type"] == "webhook.test"
    finally:
        receiver.server.shutdown()
