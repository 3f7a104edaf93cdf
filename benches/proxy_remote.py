#!/usr/bin/env python3
"""The time `reasons proxy --url` and `reasons proxy --listen` add to a call, side by side with
`mcp-remote` and `supergateway`, on one local MCP server (server-everything). Not part of the test
suite.

    benches/proxy_remote.py [CALLS]        (after `cargo build --release` and .ci/real-parts;
                                            REASONS=PATH times another build)

The stdio bridges (`reasons proxy --url`, `mcp-remote`), in front of server-everything in its
Streamable HTTP mode: initialize, then CALLS sequential `echo` calls over stdio; each call's time
to the first byte of its answer and to the whole answer (its line).

The HTTP faces: the same calls over HTTP (one kept-alive connection, an SSE answer read whole),
straight to that server and through `reasons proxy --listen --url`; and to server-everything on
stdio behind `reasons proxy --listen -- SERVER` and behind `supergateway` (stateful, one server
process as here), when it is installed:

    npm install --prefix target/bench-npm supergateway

The calls made directly over HTTP are the baseline: the added time is a median minus the direct
median.
"""
import http.client
import json
import os
import socket
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = os.path.join(ROOT, "target", "real-parts", "npm", "node_modules")
EVERYTHING = os.path.join(PARTS, "@modelcontextprotocol", "server-everything", "dist", "index.js")
MCP_REMOTE = os.path.join(PARTS, ".bin", "mcp-remote")
SUPERGATEWAY = os.path.join(ROOT, "target", "bench-npm", "node_modules", ".bin", "supergateway")
REASONS = os.environ.get("REASONS", os.path.join(ROOT, "target", "release", "reasons"))
CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 500
WARMUP = 50

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


def call(n):
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": f"call {n}", "reason": "bench"}}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(what, found, seconds=30):
    """Polls `found` until it gives something, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = found()
        if result:
            return result
        time.sleep(0.02)
    raise SystemExit(f"never: {what}")


def start_server():
    port = free_port()
    server = subprocess.Popen(["node", EVERYTHING, "streamableHttp"], env={**os.environ, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if "listening on port" in line:
            break
    return server, f"http://127.0.0.1:{port}/mcp"


def bridge(argv):
    """Times CALLS calls through a stdio bridge: (first byte, whole answer) lists in ms."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)
    out = proc.stdout

    def send(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())

    def answer_to(n):
        """Reads lines until the answer to request n: (first byte time, whole time)."""
        while True:
            first = out.read(1)
            t_first = time.perf_counter()
            rest = bytearray(first)
            while not rest.endswith(b"\n"):
                rest += os.read(out.fileno(), 65536)
            t_whole = time.perf_counter()
            for line in bytes(rest).splitlines():
                message = json.loads(line)
                if message.get("id") == n:
                    return t_first, t_whole

    send(INIT)
    answer_to(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    firsts, wholes = [], []
    for n in range(1, CALLS + WARMUP + 1):
        start = time.perf_counter()
        send(call(n))
        t_first, t_whole = answer_to(n)
        if n > WARMUP:
            firsts.append((t_first - start) * 1000)
            wholes.append((t_whole - start) * 1000)
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return firsts, wholes


def over_http(url):
    """Times CALLS calls POSTed to `url` over one HTTP connection: (first byte, whole) in ms."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    path = "/" + url.split("//")[1].split("/", 1)[1]
    conn = http.client.HTTPConnection(host, int(port))
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    def post(message, extra):
        conn.request("POST", path, json.dumps(message), {**headers, **extra})
        response = conn.getresponse()
        first = response.read(1)
        t_first = time.perf_counter()
        body = first + response.read()
        t_whole = time.perf_counter()
        # A fast error is no answer: each call must come back echoed.
        if message.get("method") == "tools/call":
            expected = f"Echo: {message['params']['arguments']['message']}"
            if expected.encode() not in body:
                raise SystemExit(f"{url} did not answer {expected!r}: {body[:300]!r}")
        return response, t_first, t_whole

    response, *_ = post(INIT, {})
    session = {"mcp-protocol-version": "2025-06-18"}
    if response.getheader("mcp-session-id"):
        session["mcp-session-id"] = response.getheader("mcp-session-id")
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    firsts, wholes = [], []
    for n in range(1, CALLS + WARMUP + 1):
        start = time.perf_counter()
        _, t_first, t_whole = post(call(n), session)
        if n > WARMUP:
            firsts.append((t_first - start) * 1000)
            wholes.append((t_whole - start) * 1000)
    conn.close()
    return firsts, wholes


def listening(argv):
    """Starts `reasons proxy --listen 127.0.0.1:0 ARGV…`; (the process, its URL) once it listens."""
    said = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([REASONS, "proxy", "--listen", "127.0.0.1:0", *argv],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=said)

    def url():
        said.seek(0)
        found = re.search(r"proxy listening on (http://\S+/mcp)", said.read())
        return found and found.group(1)

    return proc, eventually("reasons proxy --listen listens", url)


def supergateway(server_argv):
    """Starts supergateway in front of a stdio server; (the process, its URL) once it listens."""
    port = free_port()
    proc = subprocess.Popen([SUPERGATEWAY, "--stdio", " ".join(server_argv),
                             "--outputTransport", "streamableHttp", "--stateful",
                             "--port", str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)

    def accepts():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    eventually("supergateway listens", accepts)
    return proc, f"http://127.0.0.1:{port}/mcp"


def through(start):
    """Times the calls through a face `start()` starts, and ends it."""
    proc, url = start()
    try:
        return over_http(url)
    finally:
        proc.kill()
        proc.wait()


def report(title, results, base, pairs):
    """Prints the medians of `results`, what each adds over `base`, and each pair's ratio."""
    base_first = statistics.median(results[base][0])
    base_whole = statistics.median(results[base][1])
    print(f"{title}: {CALLS} echo calls each, medians in ms (added: over {base})")
    print(f"{'':32} {'first byte':>11} {'added':>7} {'whole':>8} {'added':>7} {'p90 whole':>10}")
    for name, (firsts, wholes) in results.items():
        first, whole = statistics.median(firsts), statistics.median(wholes)
        p90 = statistics.quantiles(wholes, n=10)[-1]
        print(f"{name:32} {first:11.3f} {first - base_first:7.3f} {whole:8.3f} "
              f"{whole - base_whole:7.3f} {p90:10.3f}")
    for ours, theirs in pairs:
        if ours in results and theirs in results:
            first = statistics.median(results[ours][0]) / statistics.median(results[theirs][0])
            whole = statistics.median(results[ours][1]) / statistics.median(results[theirs][1])
            print(f"{ours} / {theirs}: first byte {first:.2f}, whole answer {whole:.2f}")
    print()


def main():
    stdio_server = ["node", EVERYTHING, "stdio"]
    server, url = start_server()
    try:
        bridges = {
            "direct HTTP": over_http(url),
            "reasons proxy --url": bridge([REASONS, "proxy", "--url", url]),
            "mcp-remote": bridge([MCP_REMOTE, url, "--transport", "http-only"]),
        }
        faces = {
            "direct HTTP": over_http(url),
            "reasons proxy --listen --url": through(lambda: listening(["--url", url])),
            "reasons proxy --listen -- SERVER": through(lambda: listening(["--", *stdio_server])),
        }
        if os.path.exists(SUPERGATEWAY):
            faces["supergateway --stdio SERVER"] = through(lambda: supergateway(stdio_server))
        else:
            print(f"supergateway is not installed ({SUPERGATEWAY}): "
                  "npm install --prefix target/bench-npm supergateway\n")
    finally:
        server.kill()
    report("stdio bridges", bridges, "direct HTTP", [("reasons proxy --url", "mcp-remote")])
    report("HTTP faces", faces, "direct HTTP",
           [("reasons proxy --listen --url", "direct HTTP"),
            ("reasons proxy --listen -- SERVER", "supergateway --stdio SERVER")])


if __name__ == "__main__":
    main()
