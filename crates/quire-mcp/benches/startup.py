"""How fast `quire mcp` answers after it starts, on a large generated vault with a prebuilt index.

    python3 crates/quire-mcp/benches/startup.py [--quire target/debug/quire] [--notes 10000] [--runs 3]

Generates NOTES small notes (in folders of 100, with headings, tags and links) in a temp dir,
indexes them once with `quire index --no-embeddings`, then for each run spawns
`quire mcp` (watching, as a client would start it) and speaks raw JSON-RPC over its pipes (no
SDK, so the figures are the server's). It prints, per run, the seconds from spawn to:
the `initialize` answer, the first `search_notes` answer (index only), the first `get_note`
answer (the file, looked up in the index), and the first `vault_tree` answer (which needs the
whole vault parsed, done in the background). Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path


def generate(vault: Path, notes: int) -> None:
    for i in range(notes):
        folder = vault / f"area-{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note {i:05d}.md").write_text(
            f"---\ntags: [area{i // 100}, kind{i % 7}]\n---\n# Note {i}\n\n"
            f"Some thoughts about topic {i % 97} and word{i}.\n\n## Details\n"
            f"- links to [[note {(i * 31) % notes:05d}]]\n- and to [[note {(i + 1) % notes:05d}]]\n"
        )


class Server:
    def __init__(self, command: list[str]) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.next_id = 0

    def request(self, method: str, params: dict) -> float:
        """Sends a request, waits for its answer; returns seconds since spawn."""
        assert self.process.stdin and self.process.stdout
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise RuntimeError(f"{method}: {message}")
                return time.monotonic() - self.started

    def notify(self, method: str) -> None:
        assert self.process.stdin
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quire", default="target/debug/quire")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault, index = Path(tmp) / "vault", Path(tmp) / "index"
        generate(vault, args.notes)
        base = [args.quire, "--vault", str(vault), "--index-dir", str(index), "--no-embeddings"]
        started = time.monotonic()
        subprocess.run([*base, "index"], check=True, stdout=subprocess.DEVNULL)
        print(f"{args.notes} notes indexed in {time.monotonic() - started:.1f}s (done once, before the runs)")
        print("run  initialize  search_notes  get_note  vault_tree   (seconds from spawn)")
        tool = lambda name, arguments: ("tools/call", {"name": name, "arguments": arguments})  # noqa: E731
        for run in range(1, args.runs + 1):
            server = Server([*base, "mcp"])
            try:
                init = server.request("initialize", {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "startup-bench", "version": "0"},
                })
                server.notify("notifications/initialized")
                search = server.request(*tool("search_notes", {"query": "topic 42 thoughts", "k": 5}))
                note = server.request(*tool("get_note", {"path": "area-042/note 04242"}))
                tree = server.request(*tool("vault_tree", {}))
            finally:
                server.stop()
            print(f"{run:>3}  {init:>10.3f}  {search:>12.3f}  {note:>8.3f}  {tree:>10.3f}")


if __name__ == "__main__":
    main()
