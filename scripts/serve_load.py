#!/usr/bin/env python3
"""Load test of `rocmforge serve` over loopback: N concurrent streaming clients with mixed prompt
and output lengths for a bounded time. Checks that every request completes (finish_reason, usage,
data: [DONE]) or gets a clean 429, that streamed chunks match usage.completion_tokens, and that
KV pages return to 0 when idle; reports requests/s, output tokens/s, TTFT and inter-token p50/p99.
Standard library only, so it runs from a dist/ copy (docs/SERVING.md).

  scripts/serve_load.py --rocmforge build/tools/rocmforge -m build/models/default.gguf --clients 16 --duration 60
  scripts/serve_load.py --url http://127.0.0.1:8080 --clients 16 --duration 60   # a server already running
  scripts/serve_load.py ... --shared-prefix-words 700   # every prompt starts with the same 700 words
                                                        # (a shared system prompt: prefix cache hits)
"""
import argparse, http.client, json, os, random, re, signal, subprocess, sys, threading, time, urllib.parse

WORDS = ("and the lord spake unto moses saying speak unto the children of israel that they bring me an "
         "offering of every man that giveth it willingly with his heart ye shall take my offering").split()


def percentile(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ttft, self.itl = [], []
        self.done = self.tokens = self.rejected = 0
        self.errors = []

    def error(self, msg):
        with self.lock:
            self.errors.append(msg)


def one_request(host, port, key, rng, args, stats):
    prompt = args.shared_prefix + " ".join(rng.choice(WORDS) for _ in range(rng.randint(*args.prompt_words)))
    max_tokens = rng.randint(*args.max_tokens)
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": args.temperature, "stream": True,
                       "stream_options": {"include_usage": True}})
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    conn = http.client.HTTPConnection(host, port, timeout=120)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/completions", body, headers)
    resp = conn.getresponse()
    if resp.status == 429:
        resp.read()
        with stats.lock:
            stats.rejected += 1
        time.sleep(float(resp.getheader("Retry-After", "1")))
        return
    if resp.status != 200:
        stats.error(f"HTTP {resp.status}: {resp.read()[:200]!r}")
        return
    chunks, first, last, finish, usage, done = 0, None, None, None, None, False
    itl = []
    for raw in resp:
        line = raw.decode().rstrip("\n")
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            done = True
            break
        ev = json.loads(data)
        if "error" in ev:
            stats.error("error event: " + ev["error"]["message"])
            return
        if ev.get("usage"):
            usage = ev["usage"]
        for c in ev.get("choices", []):
            if c.get("finish_reason"):
                finish = c["finish_reason"]
            if c.get("text"):
                now = time.perf_counter()
                if first is None:
                    first = now
                else:
                    itl.append(now - last)
                last = now
                chunks += 1
    conn.close()
    if not done or finish not in ("stop", "length") or usage is None:
        stats.error(f"truncated response: done={done} finish={finish} usage={usage}")
        return
    n = usage["completion_tokens"]
    # A chunk carries one token's text, except tokens whose text is held back (partial UTF-8).
    if chunks > n or (finish == "length" and n != max_tokens):
        stats.error(f"token count mismatch: {chunks} chunks, usage {n}, max_tokens {max_tokens}, {finish}")
        return
    with stats.lock:
        stats.done += 1
        stats.tokens += n
        if first is not None:
            stats.ttft.append(first - t0)
        stats.itl.extend(itl)


def client(host, port, key, seed, args, stats, deadline):
    rng = random.Random(seed)
    while time.time() < deadline:
        try:
            one_request(host, port, key, rng, args, stats)
        except Exception as e:  # a lost connection is a failure of the server under test
            stats.error(f"{type(e).__name__}: {e}")


def metrics_text(host, port, key):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request("GET", "/metrics", headers={"Authorization": "Bearer " + key} if key else {})
    return conn.getresponse().read().decode()


def metric(text, name):
    """The value of sample `name` (with its labels, if any) in a /metrics text, or None."""
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def scheduler_steps(text):
    """The server's step counters by kind (decode / mixed): steps, seconds, decode rows, prompt tokens."""
    return {kind: [metric(text, f'rocmforge_scheduler_{name}_total{{kind="{kind}"}}') or 0.0
                   for name in ("steps", "step_seconds", "decode_rows", "prompt_tokens")]
            for kind in ("decode", "mixed")}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="a running server; else --rocmforge starts one on a free port")
    ap.add_argument("--rocmforge", help="rocmforge binary to start (with -m)")
    ap.add_argument("-m", "--model", default="", help="model for the started server")
    ap.add_argument("--server-args", default="", help="more options for the started server (quoted)")
    ap.add_argument("--api-key", default=os.environ.get("ROCMFORGE_API_KEY", ""))
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--duration", type=float, default=60, help="seconds of load (bounded: at most 3600)")
    ap.add_argument("--prompt-words", type=int, nargs=2, default=(4, 120))
    ap.add_argument("--shared-prefix-words", type=int, default=0,
                    help="words every prompt begins with, the same for all (a shared system prompt; default 0)")
    ap.add_argument("--max-tokens", type=int, nargs=2, default=(16, 256))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--temperature", type=float, default=0.8, help="of every request (0: greedy)")
    ap.add_argument("--server-log", help="write the started server's stderr after its start line to this file")
    args = ap.parse_args()
    args.duration = min(args.duration, 3600)
    shared = random.Random(args.seed)
    args.shared_prefix = "".join(shared.choice(WORDS) + " " for _ in range(max(args.shared_prefix_words, 0)))
    server = None
    if args.url:
        u = urllib.parse.urlparse(args.url)
        host, port = u.hostname, u.port or 80
    elif args.rocmforge:
        cmd = [args.rocmforge, "serve", "--port", "0", "--parallel", str(args.clients)] + \
              (["-m", args.model] if args.model else []) + args.server_args.split()
        server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        host, port = "127.0.0.1", None
        for line in server.stderr:
            sys.stderr.write(line)
            m = re.search(r"listening on http://[\d.]+:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        if port is None:
            sys.exit("the server did not start")
        def drain(log):  # the pipe must not fill; the lines go to --server-log when given
            with open(log, "w") if log else open(os.devnull, "w") as f:
                for line in server.stderr:
                    f.write(line)
                    f.flush()
        threading.Thread(target=drain, args=(args.server_log,), daemon=True).start()
    else:
        sys.exit("give --url or --rocmforge")
    try:
        stats = Stats()
        rss0 = rss_kib(server.pid) if server else None
        deadline = time.time() + args.duration
        t0 = time.perf_counter()
        threads = [threading.Thread(target=client, args=(host, port, args.api_key, args.seed * 1000 + i, args, stats, deadline))
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        text = metrics_text(host, port, args.api_key)
        pages = metric(text, "rocmforge_kv_pages_used")
        prefix = [metric(text, "rocmforge_prefix_cache_" + m + "_total") for m in ("lookups", "hits", "cached_tokens")]
        steps = scheduler_steps(text)
        rss1 = rss_kib(server.pid) if server else None
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            rc = server.wait(timeout=30)
    print(f"clients {args.clients}, {wall:.1f} s, prompt words {args.prompt_words}, max_tokens {args.max_tokens}")
    print(f"requests completed {stats.done} ({stats.done / wall:.2f}/s), rejected 429 {stats.rejected}, "
          f"failed {len(stats.errors)}")
    print(f"output tokens {stats.tokens} ({stats.tokens / wall:.1f}/s)")
    print(f"TTFT p50 {percentile(stats.ttft, 50) * 1e3:.1f} ms, p99 {percentile(stats.ttft, 99) * 1e3:.1f} ms")
    print(f"inter-token p50 {percentile(stats.itl, 50) * 1e3:.2f} ms, p99 {percentile(stats.itl, 99) * 1e3:.2f} ms")
    for kind, (n, sec, rows, prompt) in steps.items():
        if n:
            print(f"scheduler {kind} steps {n:.0f}: {sec:.1f} s ({100 * sec / wall:.0f}% of the wall), "
                  f"{1e3 * sec / n:.2f} ms each, {rows / n:.1f} decode rows and {prompt / n:.1f} prompt tokens each")
    prefix = [v or 0 for v in prefix]  # None: a server without the counters
    print(f"prefix cache: {prefix[0]:.0f} lookups, {prefix[1]:.0f} hits, {prefix[2]:.0f} prompt tokens from the cache")
    print(f"KV pages in use after the load: {pages:.0f}")
    if server:
        print(f"server RSS {rss0 / 1024:.1f} MiB at start, {rss1 / 1024:.1f} MiB at the end; exit status {rc}")
    for e in stats.errors[:10]:
        print("error:", e)
    ok = not stats.errors and pages == 0 and (server is None or rc == 0)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
