#!/usr/bin/env python3
"""The figures of the reliability pass, on a built `quire` binary (default target/debug/quire):

1. peak resident memory of `quire index` (with its PDF workers) on each hostile PDF, beside a
   vault without one (baseline, same script);
2. a second `quire index` after a slow PDF failed (medians of 5, against the same vault without
   the PDF);
3. threads, resident memory and PDF workers of `quire serve` after three rescans with a slow PDF;
4. 3,000 `POST /api/proposals` from 8 threads: acknowledged ids, ids stored, spurious 409s, and
   every acknowledged id applied and checked against the text it was acknowledged for.

Usage: scripts/bench/trust.py [QUIRE_BINARY]   (builds nothing; run `cargo build -p quire
--examples -p quire-testkit` first for the hostile PDF writer).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUIRE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/quire"))
WRITER = os.path.join(ROOT, "target/debug/examples/hostile_pdfs")
ENV = dict(os.environ, QUIRE_MODEL="/nonexistent/quire-model.bin", QUIRE_PDF_TIMEOUT_SECS="5")
for var in ["QUIRE_TOKEN", "QUIRE_BACKEND", "QUIRE_LLM_BASE_URL", "QUIRE_LLM_PRESET"]:
    ENV.pop(var, None)

PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def vault_with(tmp, name, pdf=None):
    vault = os.path.join(tmp, name)
    os.makedirs(os.path.join(vault, "Notes"))
    with open(os.path.join(vault, "Notes/Kelp.md"), "w") as f:
        f.write("# Kelp\n\nKelp forests fix carbon.\n")
    if pdf:
        shutil.copy(pdf, os.path.join(vault, "paper.pdf"))
    return vault


def index_args(vault, index):
    return [QUIRE, "--vault", vault, "--index-dir", index, "--json", "index"]


def peak_mb(vault, index):
    out = subprocess.run([sys.executable, "-c", PEAK] + index_args(vault, index),
                         env=ENV, capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def timed(args, runs=5):
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, env=ENV, capture_output=True, check=True)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def proc_threads_rss(pid):
    text = open(f"/proc/{pid}/status").read()
    threads = int(re.search(r"Threads:\s+(\d+)", text).group(1))
    rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024
    return threads, rss


def workers():
    count = 0
    for pid in os.listdir("/proc"):
        try:
            if b"__quire-pdf-worker" in open(f"/proc/{pid}/cmdline", "rb").read():
                count += 1
        except OSError:
            pass
    return count


def request(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start_serve(vault, index):
    proc = subprocess.Popen([QUIRE, "--vault", vault, "--index-dir", index, "serve", "--port", "0",
                             "--debounce-ms", "300"], env=ENV, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on (http://\S+)/", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, m.group(1)
    raise SystemExit("quire serve did not start")


def wait_idle(base, seconds=120):
    until = time.time() + seconds
    while time.time() < until:
        status, body = request("GET", f"{base}/api/status")
        if status == 200 and not body.get("syncing") and body.get("generation", 0) > 0:
            return
        time.sleep(0.2)
    raise SystemExit("the server never finished its sync")


def main():
    tmp = tempfile.mkdtemp(prefix="quire-trust-")
    pdfs = os.path.join(tmp, "pdfs")
    os.makedirs(pdfs)
    subprocess.run([WRITER, pdfs], check=True, capture_output=True)
    print(f"binary: {QUIRE}")

    print("\n1. peak resident memory of `quire index` (bound 600 MB)")
    base = peak_mb(vault_with(tmp, "v-base"), os.path.join(tmp, "i-base"))
    print(f"   baseline (no PDF)   {base:7.0f} MB")
    for name in ["double-flate.pdf", "repeated.pdf", "slow.pdf"]:
        vault = vault_with(tmp, "v-" + name, os.path.join(pdfs, name))
        print(f"   {name:19} {peak_mb(vault, os.path.join(tmp, 'i-' + name)):7.0f} MB")

    print("\n2. a second `quire index` after the slow PDF failed (median of 5)")
    slow_vault = os.path.join(tmp, "v-slow.pdf")
    again = timed(index_args(slow_vault, os.path.join(tmp, "i-slow.pdf")))
    plain = timed(index_args(os.path.join(tmp, "v-base"), os.path.join(tmp, "i-base")))
    print(f"   with the failed PDF {again:.3f} s; without it {plain:.3f} s; ratio {again / plain:.2f}")

    print("\n3. `quire serve` with the slow PDF, after three rescans")
    serve_vault = vault_with(tmp, "v-serve", os.path.join(pdfs, "slow.pdf"))
    proc, url = start_serve(serve_vault, os.path.join(tmp, "i-serve"))
    wait_idle(url)
    threads0, rss0 = proc_threads_rss(proc.pid)
    print(f"   after the first sync: {threads0} threads, {rss0:.0f} MB, {workers()} PDF workers")
    for n in range(3):
        os.makedirs(os.path.join(serve_vault, f"Folder {n}"))
        time.sleep(1.5)
        wait_idle(url)
    threads, rss = proc_threads_rss(proc.pid)
    print(f"   after three rescans:  {threads} threads, {rss:.0f} MB, {workers()} PDF workers")

    print("\n4. 3,000 POST /api/proposals from 8 threads")
    acknowledged, failures, lock = [], {}, threading.Lock()

    def propose(t):
        for n in range(375):
            text = f"thread {t} proposal {n}\n"
            status, body = request("POST", f"{url}/api/proposals",
                                   {"path": f"New/{t}-{n}.md", "change": "create", "text": text})
            with lock:
                if status == 200:
                    acknowledged.append((body["id"], f"New/{t}-{n}.md", text))
                else:
                    code = (body or {}).get("error", {}).get("code", status)
                    failures[code] = failures.get(code, 0) + 1

    started = time.perf_counter()
    pool = [threading.Thread(target=propose, args=(t,)) for t in range(8)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    made = time.perf_counter() - started
    ids = {a[0] for a in acknowledged}
    status, listed = request("GET", f"{url}/api/proposals?all=true")
    stored = len(listed) if isinstance(listed, list) else len(listed.get("proposals", []))
    print(f"   {len(acknowledged)} acknowledged, {len(ids)} distinct ids, {stored} stored, "
          f"refused: {failures or 'none'} ({made:.1f} s)")
    wrong = 0
    started = time.perf_counter()
    for pid, path, text in acknowledged:
        status, body = request("POST", f"{url}/api/proposals/{pid}/apply", {})
        written = open(os.path.join(serve_vault, path)).read() if status == 200 else None
        if written != text:
            wrong += 1
    print(f"   applied every acknowledged id: {len(acknowledged) - wrong} wrote exactly their text, "
          f"{wrong} did not ({time.perf_counter() - started:.1f} s)")
    proc.terminate()
    proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
