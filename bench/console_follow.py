"""Follows an event's dashboard in headless Chromium while a sale runs, over WebDriver.

Opens /admin signed in, waits for the newest event (the one the load generator creates),
opens its dashboard and, every 0.5 s until `seconds` pass, reads the page's sold counter,
its JS heap (Chromium's precise memory info; after a full collection once the map is drawn
and at the end) and, at the same moment, the server's own
count (GET /v1/events/{id}/availability). Prints one JSON line per sample and a summary.
Usage: console_follow.py <base url> <admin token> <chromedriver port> <seconds>
"""
import json
import sys
import time
import urllib.request

base, token, port, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
driver = f"http://127.0.0.1:{port}"


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(driver + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["value"]


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


session = call("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
    "binary": "/usr/bin/chromium",
    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--enable-precise-memory-info", "--js-flags=--expose-gc", "--window-size=1280,900"]}}}})["sessionId"]
s = f"/session/{session}"


def run(js, args=()):
    return call("POST", s + "/execute/sync", {"script": js, "args": list(args)})


try:
    known = {e["id"] for e in get(base + "/v1/events")["events"]}
    deadline = time.time() + 60
    event = None
    while event is None and time.time() < deadline:
        fresh = [e["id"] for e in get(base + "/v1/events")["events"] if e["id"] not in known]
        event = fresh[0] if fresh else None
        time.sleep(0.05)
    if event is None:
        sys.exit("no event appeared")
    call("POST", s + "/url", {"url": base + "/admin"})
    run("sessionStorage.setItem('boxoffice.console.token', arguments[0])", [token])
    call("POST", s + "/url", {"url": f"{base}/admin/events/{event}"})
    samples = []
    collected = []  # the heap after a full collection: once the map is drawn, and at the end
    gc = "window.gc(); return performance.memory.usedJSHeapSize"
    start = time.time()
    while time.time() - start < seconds:
        page = run("""return {sold: Number((document.querySelector('[data-count=sold]') || {}).textContent
                                      ?.replace(/,/g, '')) || 0,
                              heap: performance.memory.usedJSHeapSize,
                              nodes: document.getElementsByTagName('*').length}""")
        truth = get(f"{base}/v1/events/{event}/availability")["sold"]
        sample = {"t": round(time.time() - start, 2), "shown": page["sold"], "sold": truth,
                  "behind": truth - page["sold"], "heap_mb": round(page["heap"] / 1e6, 1),
                  "nodes": page["nodes"]}
        if page["sold"] > 0 and not collected:
            collected.append(round(run(gc) / 1e6, 1))
        samples.append(sample)
        print(json.dumps(sample), flush=True)
        time.sleep(0.5)
    collected.append(round(run(gc) / 1e6, 1))
    selling = [x for x in samples if x["shown"] > 0]
    rate = [b["sold"] - a["sold"] for a, b in zip(samples, samples[1:])]
    print(json.dumps({"summary": {
        "samples": len(samples),
        "most_behind_seats": max((x["behind"] for x in selling), default=None),
        "last_behind_seats": samples[-1]["behind"],
        "fastest_sale_seats_per_s": round(max(rate, default=0) / 0.5) if rate else None,
        "heap_mb_after_gc_first": collected[0],
        "heap_mb_after_gc_last": collected[-1],
        "heap_mb_first": selling[0]["heap_mb"] if selling else None,
        "heap_mb_max": max((x["heap_mb"] for x in selling), default=None),
        "heap_mb_last": samples[-1]["heap_mb"],
        "nodes_first": selling[0]["nodes"] if selling else None,
        "nodes_last": samples[-1]["nodes"]}}))
finally:
    call("DELETE", s)
