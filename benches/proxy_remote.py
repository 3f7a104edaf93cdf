#!/usr/bin/env python3
"""The time `reasons proxy --url` adds to a call, side by side with `mcp-remote`, on one local
MCP server (server-everything in its Streamable HTTP mode). Not part of the test suite.

    benches/proxy_remote.py [CALLS]        (after `cargo build --release` and .ci/real-parts;
                                            REASONS=PATH times another build)

For each bridge: initialize, then CALLS sequential `echo` calls over stdio; each call's time to
the first byte of its answer and to the whole answer (its line). The same calls made directly
over HTTP (one kept-alive connection, the server's SSE answer read whole) are the baseline: the
added time is a bridge's median minus the direct median.
"""
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = os.path.join(ROOT, "target", "real-parts", "npm", "node_modules")
EVERYTHING = os.path.join(PARTS, "@modelcontextprotocol", "server-everything", "dist", "index.js")
MCP_REMOTE = os.path.join(PARTS, ".bin", "mcp-remote")
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


def direct(url):
    """The same calls straight to the server over one HTTP connection."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port))
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    def post(message, extra):
        conn.request("POST", "/mcp", json.dumps(message), {**headers, **extra})
        response = conn.getresponse()
        response.read(1)
        t_first = time.perf_counter()
        response.read()
        return response, t_first, time.perf_counter()

    response, *_ = post(INIT, {})
    session = {"mcp-session-id": response.getheader("mcp-session-id"), "mcp-protocol-version": "2025-06-18"}
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


def main():
    server, url = start_server()
    try:
        results = {
            "direct HTTP": direct(url),
            "reasons proxy --url": bridge([REASONS, "proxy", "--url", url]),
            "mcp-remote": bridge([MCP_REMOTE, url, "--transport", "http-only"]),
        }
    finally:
        server.kill()
    base_first = statistics.median(results["direct HTTP"][0])
    base_whole = statistics.median(results["direct HTTP"][1])
    print(f"{CALLS} echo calls each, medians in ms (added: over direct HTTP)")
    print(f"{'':24} {'first byte':>11} {'added':>7} {'whole':>8} {'added':>7} {'p90 whole':>10}")
    for name, (firsts, wholes) in results.items():
        first, whole = statistics.median(firsts), statistics.median(wholes)
        p90 = statistics.quantiles(wholes, n=10)[-1]
        print(f"{name:24} {first:11.3f} {first - base_first:7.3f} {whole:8.3f} {whole - base_whole:7.3f} {p90:10.3f}")
    ours = statistics.median(results["reasons proxy --url"][1])
    theirs = statistics.median(results["mcp-remote"][1])
    print(f"whole answer, reasons / mcp-remote: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
