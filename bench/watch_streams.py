#!/usr/bin/env python3
"""Watch streams and the API (docs/performance.md "Watch streams"): the latency of keep-alive GETs
while node-label writes flow, first with no watcher, then with N open `GET /v1/watch` streams that
each publish wakes. Not a test: it prints figures. Every loop is bounded in count and time.

Usage: bench/watch_streams.py URL --write-path PATH [--watchers 200] [--seconds 15] [--get PATH]
"""
import argparse
import http.client
import json
import socket
import statistics
import threading
import time
import urllib.parse


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))]


def writer(host, port, path, stop, counts):
    """Node-label writes, one at a time, each acknowledged before the next (one publish each)."""
    conn = http.client.HTTPConnection(host, port, timeout=10)
    i = 0
    while not stop.is_set():
        body = json.dumps({"Labels": {"bench": str(i)}})
        try:
            conn.request("PUT", path, body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            counts["writes"] += 1 if r.status < 300 else 0
        except OSError:
            conn = http.client.HTTPConnection(host, port, timeout=10)
        i += 1


def watchers_process(host, port, n, stop, opened, out):
    """n watch streams in one process of their own (so the GETs measured do not share a Python
    interpreter with them), read with a selector until stopped; reports each one's events."""
    import selectors
    sel = selectors.DefaultSelector()
    events = {}
    failed = 0
    for i in range(n):
        try:
            s = socket.create_connection((host, port), timeout=30)
        except OSError:
            failed += 1
            continue
        s.sendall(b"GET /v1/watch HTTP/1.1\r\nHost: x\r\n\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        events[i] = 0
    opened.set()
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.2):
            try:
                data = key.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                continue
            events[key.data] += data.count(b"\nid: ") + data.count(b"\nevent: ")
    out.put((failed, list(events.values())))


def measure(host, port, path, seconds):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    lat = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(lat) < 200000:
        t = time.perf_counter()
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        lat.append((time.perf_counter() - t) * 1000.0)
    return lat


def run(host, port, args, watchers):
    import multiprocessing
    stop = multiprocessing.Event()
    opened = multiprocessing.Event()
    out = multiprocessing.Queue()
    proc = None
    if watchers:
        proc = multiprocessing.Process(target=watchers_process,
                                       args=(host, port, watchers, stop, opened, out))
        proc.start()
        opened.wait(60)
        time.sleep(1)  # every stream has its head and first piece
    wstop = threading.Event()
    counts = {"writes": 0}
    w = threading.Thread(target=writer, args=(host, port, args.write_path, wstop, counts),
                         daemon=True)
    w.start()
    lat = measure(host, port, args.get, args.seconds)
    wstop.set()
    w.join(15)
    failed, per = 0, [0]
    if proc:
        stop.set()
        failed, per = out.get(timeout=30)
        proc.join(10)
    return lat, counts["writes"], failed, per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--write-path", required=True)
    ap.add_argument("--watchers", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--get", default="/v1/clusters")
    args = ap.parse_args()
    u = urllib.parse.urlparse(args.url)
    print(f"{'watchers':>8} {'GETs':>7} {'p50 ms':>7} {'p99 ms':>7} {'writes/s':>9} {'events/watcher':>15}")
    for n in (0, args.watchers):
        lat, writes, failed, per = run(u.hostname, u.port, args, n)
        note = f"  ({failed} failed to open)" if failed else ""
        print(f"{n:>8} {len(lat):>7} {percentile(lat, 50):>7.2f} {percentile(lat, 99):>7.2f} "
              f"{writes / args.seconds:>9.0f} {statistics.median(per) if per else 0:>15.0f}{note}")


if __name__ == "__main__":
    main()
