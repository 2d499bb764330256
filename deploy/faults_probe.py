"""The fault matrix's probe (deploy/faults.sh).

    faults_probe.py URL OUT.json   holds one seat of an event of its own every 100 ms until
                                   SIGTERM, then writes the error window and the holds that
                                   were acknowledged but are gone; a turn the server's
                                   adaptive limit gives (503 "the server is serving as many
                                   requests as it can quickly", with retry_after_ms) is
                                   kept, as a buyer's page keeps it, so
                                   the window is the fault's, not the sale's crowd
    faults_probe.py URL --writes OUT.json
                                   a hold and its checkout every 200 ms until SIGTERM, then
                                   writes the longest time without an order answered 201,
                                   the answers by status, the orders answered 201 that
                                   cannot be read back, and what retrying a cut checkout
                                   with its hold token gave (deploy/ha.sh test)
    faults_probe.py URL --once     a hold and its checkout on a fresh event: prints "ok ..."
                                   if both went through
    faults_probe.py URL --pending OUT.json
                                   on an event with a payment window, orders checked out
                                   and left waiting for payment, written to OUT.json
    faults_probe.py URL --pay OUT.json
                                   after the fault, each order of OUT.json: a rival's hold
                                   on its seat is refused, and its payment goes through
                                   before its pay_by; prints "ok ..." if so
"""

import base64
import hashlib
import hmac
import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request

URL = sys.argv[1]
ADMIN = os.environ["BOXOFFICE_ADMIN_TOKEN"]
SECRET = os.environ["BOXOFFICE_JWT_SECRET"].encode()


def token(user):
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": user, "exp": int(time.time()) + 3600}).encode())
    sig = b64(hmac.new(SECRET, head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def call(method, path, body=None, bearer=ADMIN):
    """(status, parsed body); status 0 when no answer came."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method, headers={
        "content-type": "application/json", "authorization": "Bearer " + bearer})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"null")
        except (ValueError, OSError):
            return e.code, None
    except (urllib.error.URLError, OSError):
        return 0, None


# How long a buyer's page keeps the adaptive limit's turns before it gives up.
PATIENCE = 30.0
# How the adaptive limit's turn begins its detail (a store that is down says otherwise).
TURN = "the server is serving as many requests as it can quickly"


def turn(status, problem):
    """Seconds until the adaptive limit's turn, if this answer is one; else None. A store
    that is down answers 503 too, but says so: that is the fault, and is not waited out."""
    if status != 503 or not isinstance(problem, dict):
        return None
    if not problem.get("detail", "").startswith(TURN) or "retry_after_ms" not in problem:
        return None
    return problem["retry_after_ms"] / 1000


def call_keeping_turns(method, path, body, bearer):
    """call(), asked again at each turn the adaptive limit gives, for up to PATIENCE."""
    given_up = time.monotonic() + PATIENCE
    while True:
        status, answer = call(method, path, body, bearer)
        wait = turn(status, answer)
        if wait is None or time.monotonic() + wait > given_up:
            return status, answer
        time.sleep(wait)


def event(seats_per_row, rows, window=0):
    _, venue = call("POST", "/v1/venues", {"name": "Probe", "sections": [{
        "id": "p", "name": "Probe",
        "rows": [{"label": f"R{r}", "seats": seats_per_row} for r in range(rows)]}]})
    _, created = call("POST", "/v1/events", {
        "venue_id": venue["id"], "name": "Probe", "starts_at": "2030-01-01T20:00:00Z",
        "hold_ttl_seconds": 600, "max_hold_seconds": 900, "max_seats_per_user": 1,
        "ticket_types": [{"code": "t", "name": "T", "price_cents": 100, "currency": "EUR"}],
        "allocations": [{"ticket_type": "t", "section": "p"}],
        "payment_window_seconds": window})
    return created["id"], [f"p-R{r}-{n}" for r in range(rows) for n in range(1, seats_per_row + 1)]


def once():
    event_id, seats = event(2, 1)
    user = token("after-the-fault")
    status, hold = call("POST", f"/v1/events/{event_id}/holds", {"seats": seats[:1]}, user)
    if status != 201:
        return f"failed: hold answered {status}"
    status, _ = call("POST", f"/v1/events/{event_id}/orders", {"hold_token": hold["hold_token"]}, user)
    return "ok (hold 201, order 201)" if status == 201 else f"failed: checkout answered {status}"


def probe(out):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    event_id, seats = event(50, 40)
    open(out + ".ready", "w").close()
    acknowledged, failures, probes, kinds, first, slowest = [], [], 0, {}, None, 0.0
    began = time.monotonic()
    for i, seat in enumerate(seats):
        if stop:
            break
        started = time.monotonic()
        user = f"probe-{i}"
        status, hold = call_keeping_turns(
            "POST", f"/v1/events/{event_id}/holds", {"seats": [seat]}, token(user))
        probes += 1
        slowest = max(slowest, time.monotonic() - started)
        if status == 201:
            acknowledged.append((user, hold["hold_token"]))
        else:
            failures.append(started)
            detail = hold.get("detail", "") if isinstance(hold, dict) else ""
            kind = f"{status} {detail.split(';')[0]}".strip()
            kinds[kind] = kinds.get(kind, 0) + 1
            if first is None:
                first = round(started - began, 2)
        time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))
    lost = 0
    for user, hold_token in acknowledged:
        status, _ = call("GET", f"/v1/events/{event_id}/holds/{hold_token}", None, token(user))
        lost += status == 404
    window = round((failures[-1] - failures[0]) * 1000 + 100) if failures else 0
    with open(out, "w") as f:
        json.dump({"probes": probes, "failed": len(failures), "window_ms": window,
                   "acknowledged": len(acknowledged), "lost": lost,
                   "failed_as": kinds, "first_failure_s": first,
                   "slowest_ms": round(slowest * 1000)}, f)


def writes(out):
    """A hold and its checkout, one after another, each on a seat of its own, until SIGTERM:
    the longest time between two orders answered 201 (the seconds without a write), the
    answers by status, and afterwards what a client whose write was cut would see:

    - a checkout that got no answer or a 5xx is asked again with the same hold token, as a
      client retries: it answers the order it made (200 or 201) or 409 (it made none, and
      the hold is gone);
    - every order is checked out once more with its token: 200 and that same order;
    - every order read back with its seat (an order answered and gone is lost);
    - the probe's event sells exactly the seats of the orders it was told of (a seat sold
      under an order nobody was told of is a second order the retries missed)."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    event_id, seats = event(50, 40)
    open(out + ".ready", "w").close()
    ordered, cut, answers, last, gap, tries = [], [], {}, time.monotonic(), 0.0, 0
    began, timeline = time.monotonic(), []
    for i, seat in enumerate(seats):
        if stop:
            break
        started = time.monotonic()
        user = token(f"writer-{i}")
        status, hold = call_keeping_turns(
            "POST", f"/v1/events/{event_id}/holds", {"seats": [seat]}, user)
        if status == 201:
            body = {"hold_token": hold["hold_token"]}
            status, order = call_keeping_turns(
                "POST", f"/v1/events/{event_id}/orders", body, user)
            if status == 201:
                ordered.append((order["order_id"], seat, body, user))
                gap = max(gap, time.monotonic() - last)
                last = time.monotonic()
            elif status == 0 or status >= 500:
                cut.append((seat, body, user))
        tries += 1
        answers[str(status)] = answers.get(str(status), 0) + 1
        timeline.append([round(started - began, 2), status, round(time.monotonic() - started, 2)])
        time.sleep(max(0.0, 0.2 - (time.monotonic() - started)))
    gap = max(gap, time.monotonic() - last)
    acknowledged = len(ordered)
    retried = {}
    for seat, body, user in cut:
        status, order = patiently("POST", f"/v1/events/{event_id}/orders", body, user)
        retried[str(status)] = retried.get(str(status), 0) + 1
        if status in (200, 201):
            ordered.append((order["order_id"], seat, body, user))
    twice = []
    for order_id, seat, body, user in ordered:
        status, again = patiently("POST", f"/v1/events/{event_id}/orders", body, user)
        if status != 200 or not isinstance(again, dict) or again.get("order_id") != order_id:
            twice.append(f"{order_id}: {status}")
    lost = []
    for order_id, seat, _, _ in ordered:
        status, order = patiently("GET", f"/v1/orders/{order_id}", None, ADMIN)
        if status != 200 or [s["id"] for s in order["seats"]] != [seat]:
            lost.append(order_id)
    status, listing = patiently("GET", f"/v1/events/{event_id}/seats", None, ADMIN)
    sold = {s["id"] for s in listing["seats"] if s["status"] == "sold"} if status == 200 else None
    told = {seat for _, seat, _, _ in ordered}
    unknown = sorted(sold - told) if sold is not None else ["the seats could not be read"]
    with open(out, "w") as f:
        json.dump({"tries": tries, "answers": answers, "acknowledged": acknowledged,
                   "lost": len(lost), "lost_ids": lost, "longest_without_s": round(gap, 1),
                   "cut": len(cut), "retried": retried, "twice_wrong": twice,
                   "sold_unknown": unknown, "timeline": timeline}, f)


PENDING = 20


def pending(out):
    event_id, seats = event(PENDING, 2, window=600)
    orders = []
    for i, seat in enumerate(seats[:PENDING]):
        user = token(f"pending-{i}")
        status, hold = call("POST", f"/v1/events/{event_id}/holds", {"seats": [seat]}, user)
        assert status == 201, (status, hold)
        status, order = call("POST", f"/v1/events/{event_id}/orders",
                             {"hold_token": hold["hold_token"]}, user)
        assert status == 201 and order["status"] == "pending_payment", (status, order)
        orders.append({"id": order["order_id"], "total": order["total_cents"], "seat": seat})
    with open(out, "w") as f:
        json.dump({"event": event_id, "orders": orders}, f)


def patiently(method, path, body, bearer):
    """call(), asked again while the server answers 503 or nothing (the store coming back),
    for up to 15 s."""
    given_up = time.monotonic() + 15
    while True:
        status, answer = call(method, path, body, bearer)
        if status not in (0, 503) or time.monotonic() > given_up:
            return status, answer
        time.sleep(0.2)


def pay(out):
    with open(out) as f:
        state = json.load(f)
    event_id, wrong = state["event"], []
    for i, order in enumerate(state["orders"]):
        status, answer = patiently("POST", f"/v1/events/{event_id}/holds",
                                   {"seats": [order["seat"]]}, token(f"rival-{i}"))
        if status != 409:
            wrong.append(f"a rival's hold of {order['seat']} answered {status}")
    for i, order in enumerate(state["orders"]):
        status, answer = patiently("POST", f"/v1/orders/{order['id']}/payment",
                                   {"reference": f"psp-{i}", "amount_cents": order["total"]}, ADMIN)
        if status != 200 or answer.get("status") != "paid":
            wrong.append(f"the payment of {order['id']} answered {status} {answer}")
    n = len(state["orders"])
    return f"ok ({n} rivals refused, {n} orders paid)" if not wrong else "failed: " + "; ".join(wrong)


if sys.argv[2] == "--writes":
    writes(sys.argv[3])
elif sys.argv[2] == "--once":
    print(once())
elif sys.argv[2] == "--pending":
    pending(sys.argv[3])
elif sys.argv[2] == "--pay":
    print(pay(sys.argv[3]))
else:
    probe(sys.argv[2])
