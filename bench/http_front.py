#!/usr/bin/env python3
"""HTTP front-end figures for docs/performance.md: latency under idle and slow-loris connections,
keep-alive GET throughput while writes flow, and connect bursts. Not a test: it prints figures.

Usage: bench/http_front.py URL [--idle 500] [--slow 32] [--seconds 20] [--wrk-seconds 10]

The server under test is started by bench/http_front (which calls this). Every connection goes to
the loopback URL given; every loop is bounded in count and time and stops by itself.
"""
import argparse
import asyncio
import json
import re
import shutil
import socket
import statistics
import subprocess
import time
import urllib.parse


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


async def idle_connection(host, port, stop, stats):
    """Connects and sends nothing; counts when the server closes it."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        stats["idle_failed"] += 1
        return
    stats["idle_open"] += 1
    opened = time.monotonic()
    try:
        done, _ = await asyncio.wait([asyncio.ensure_future(reader.read(1)), asyncio.ensure_future(stop.wait())],
                                     return_when=asyncio.FIRST_COMPLETED)
        if not stop.is_set():
            stats["idle_closed_by_server"].append(time.monotonic() - opened)
    finally:
        writer.close()


async def slow_loris(host, port, stop, stats, body):
    """Trickles a request: a header line per second, or (body=True) a body byte per second."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        stats["slow_failed"] += 1
        return
    stats["slow_open"] += 1
    opened = time.monotonic()
    try:
        if body:
            writer.write(b"POST /v1/clusters HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100000\r\n\r\n")
        else:
            writer.write(b"GET /v1/clusters HTTP/1.1\r\nHost: x\r\n")
        await writer.drain()
        i = 0
        while not stop.is_set():
            writer.write(b"x" if body else b"X-Slow-%d: 1\r\n" % i)
            await writer.drain()
            i += 1
            try:
                data = await asyncio.wait_for(reader.read(1), timeout=1.0)
                if data == b"":
                    stats["slow_closed_by_server"].append(time.monotonic() - opened)
                    return
            except asyncio.TimeoutError:
                pass
    except (ConnectionError, OSError):
        stats["slow_closed_by_server"].append(time.monotonic() - opened)
    finally:
        writer.close()


def timed_get(host, port, path, headers):
    """One request on a fresh connection (what a new client sees), in milliseconds."""
    t0 = time.monotonic()
    with socket.create_connection((host, port), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1") else 0
    return (time.monotonic() - t0) * 1000.0, status


async def measure_latency(host, port, seconds, headers):
    out = {"/healthz": [], "/v1/clusters": []}
    statuses = []
    deadline = time.monotonic() + seconds
    loop = asyncio.get_running_loop()
    while time.monotonic() < deadline:
        for path in out:
            ms, status = await loop.run_in_executor(None, timed_get, host, port, path, headers)
            out[path].append(ms)
            statuses.append(status)
        await asyncio.sleep(0.01)
    return out, statuses


async def attack_and_measure(host, port, idle, slow, seconds, headers):
    stop = asyncio.Event()
    stats = {"idle_open": 0, "idle_failed": 0, "idle_closed_by_server": [], "slow_open": 0, "slow_failed": 0,
             "slow_closed_by_server": []}
    tasks = [asyncio.ensure_future(idle_connection(host, port, stop, stats)) for _ in range(idle)]
    tasks += [asyncio.ensure_future(slow_loris(host, port, stop, stats, body=(i % 2 == 1))) for i in range(slow)]
    await asyncio.sleep(1.0)  # let them all connect
    lat, statuses = await measure_latency(host, port, seconds, headers)
    stop.set()
    await asyncio.wait(tasks, timeout=5)
    return lat, statuses, stats


def writer_thread(host, port, seconds, headers, counter):
    """Writes flowing during the throughput run: node labels, one at a time, as fast as acked."""
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        body = json.dumps({"Labels": {"bench": str(i)}}).encode()
        try:
            with socket.create_connection((host, port), timeout=10) as s:
                extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                s.sendall(f"PUT {WRITE_PATH} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode()
                          + body)
                while s.recv(65536):
                    pass
            counter[0] += 1
        except OSError:
            counter[1] += 1
        i += 1


WRITE_PATH = ""


def wrk(url, path, seconds, connections, headers):
    if not shutil.which("wrk"):
        return None
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    cmd.append(url + path)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p99_ms = None
    if p99:
        v = float(p99.group(1))
        p99_ms = v / 1000.0 if p99.group(2) == "us" else (v if p99.group(2) == "ms" else v * 1000.0)
    return {"req_per_s": float(m.group(1)) if m else None, "p99_ms": p99_ms,
            "non_2xx": int(non2xx.group(1)) if non2xx else 0}


def connect_burst(host, port, n):
    """n simultaneous connects + one request each; the slowest completion in ms."""
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        times = list(pool.map(lambda _: timed_get(host, port, "/healthz", {})[0], range(n)))
    return max(times), statistics.median(times)


def main():
    global WRITE_PATH
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--slow", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--wrk-seconds", type=int, default=10)
    ap.add_argument("--write-path", default="")
    ap.add_argument("--token", default="")
    ap.add_argument("--paths", default="/v1/version,/v1/clusters/training",
                    help="comma-separated GET paths for the keep-alive runs")
    ap.add_argument("--keep-alive-only", action="store_true",
                    help="skip the latency, attack and connect-burst phases")
    args = ap.parse_args()
    u = urllib.parse.urlparse(args.url)
    host, port = u.hostname, u.port
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    WRITE_PATH = args.write_path

    print(f"# HTTP front end against {args.url}")
    if not args.keep_alive_only:
        attack_phase(host, port, args, headers)
    keep_alive_phase(host, port, args, headers)
    if not args.keep_alive_only:
        for n in [64, 256]:
            worst, median = connect_burst(host, port, n)
            print(f"connect burst    {n:3d} clients: median {median:7.2f} ms, slowest {worst:7.2f} ms")


def attack_phase(host, port, args, headers):
    base, _ = asyncio.run(measure_latency(host, port, 3, headers))
    for path, v in base.items():
        print(f"quiet            {path:14s} p50 {percentile(v, 50):7.2f} ms  p99 {percentile(v, 99):7.2f} ms  n={len(v)}")

    lat, statuses, stats = asyncio.run(attack_and_measure(host, port, args.idle, args.slow, args.seconds, headers))
    print(f"attack: {stats['idle_open']} idle connections open ({stats['idle_failed']} failed), "
          f"{stats['slow_open']} slow-loris ({stats['slow_failed']} failed)")
    for path, v in lat.items():
        print(f"under attack     {path:14s} p50 {percentile(v, 50):7.2f} ms  p99 {percentile(v, 99):7.2f} ms  "
              f"max {max(v):7.2f} ms  n={len(v)}")
    bad = [s for s in statuses if s != 200]
    print(f"under attack     non-200 answers: {len(bad)} of {len(statuses)}")
    if stats["idle_closed_by_server"]:
        print(f"idle connections closed by the server after {statistics.median(stats['idle_closed_by_server']):.1f} s "
              f"(median, {len(stats['idle_closed_by_server'])} closed)")
    if stats["slow_closed_by_server"]:
        print(f"slow-loris closed by the server after {statistics.median(stats['slow_closed_by_server']):.1f} s "
              f"(median, {len(stats['slow_closed_by_server'])} closed)")



def keep_alive_phase(host, port, args, headers):
    import threading
    counter = [0, 0]
    writes = None
    paths = args.paths.split(",")
    per_run = max(3, args.wrk_seconds // 4)
    if WRITE_PATH:
        writes = threading.Thread(target=writer_thread,
                                  args=(host, port, per_run * 2 * len(paths), headers, counter))
        writes.start()
    for path in paths:
        for conns in [16, 64]:
            r = wrk(args.url, path, per_run, conns, headers)
            if r is None:
                print("keep-alive: wrk not installed (apt-get install wrk)")
                break
            print(f"keep-alive GET  {path:22s} c={conns:3d}  {r['req_per_s']:9.0f} req/s  p99 {r['p99_ms']} ms  "
                  f"non-2xx {r['non_2xx']}")
    if writes:
        writes.join()
        print(f"writes during the keep-alive runs: {counter[0]} acknowledged, {counter[1]} failed")


if __name__ == "__main__":
    main()
