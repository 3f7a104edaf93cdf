"""llama.cpp's OpenAI-compatible server (xllamacpp), for the tests with a real model.

usage: llama_server.py MODEL N_CTX THREADS [SLOTS]

Loads the GGUF file MODEL with THREADS threads and SLOTS (default 1) slots (requests decoded at
once by continuous batching, each with N_CTX tokens of context), serves it on a loopback port of
the server's choosing, prints `listening on http://127.0.0.1:PORT` once the model is loaded, and
serves until its stdin closes:
the test that started it holds the pipe, so the server never outlives it, even when the test
process dies without stopping it.
"""

import sys

import xllamacpp


def main():
    model, n_ctx, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    slots = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.port = 0
    params.use_jinja = True
    # The context is shared out among the slots: each gets N_CTX.
    params.n_ctx = n_ctx * slots
    params.n_parallel = slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    # A request that names no sampling (as an agent's may not) is answered greedily, the same
    # every run: the tests check what the model did, not what it happened to draw.
    params.sampling.temp = 0
    params.sampling.seed = 42
    server = xllamacpp.Server(params)
    address = server.listening_address
    print(f"listening on {address}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
