"""Drives `quire mcp` with the official Python MCP SDK (the `mcp` package from PyPI), as an
outside client would, and checks what it answers against the vault's files.

Each scenario copies a real vault (obsidian-starter-vault) into WORKDIR, adds a long note
`Big.md` and a symlink `escape.md` that points outside the vault, and (except `fresh` and
`noindex`) indexes it with `quire index --no-embeddings`:

    python test_mcp.py --scenario stdio|http|fresh|noindex|proposals --quire BIN --corpus VAULT --workdir DIR

- stdio: every tool, the resources, traversal and malformed arguments, over stdin/stdout
  (initialize handshake), and a few calls with the 2026-07-28 protocol (server/discover);
- http: the same over streamable HTTP (`quire mcp --http 127.0.0.1:0`), plus the endpoint's
  guards (only /mcp, no browser Origin, loopback Host only);
- fresh: a watching server with an empty index: the first search waits for the first sync, and
  notes added, edited and removed while it runs are found (or gone) without a restart;
- noindex: no index and no watcher: search says how to build one; file-based tools answer.

crates/quire/tests/mcp.rs runs each scenario. Every check runs even when an earlier one failed;
the script prints one line per check and exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Awaitable, Callable

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TOOLS = {"search_notes", "get_note", "find_related_notes", "get_outline", "list_notes", "vault_tree"}
ICE = "Notes/Enceladus Ice Thickness.md"
DASHBOARD = "Notes/Notes Dashboard.md"


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    async def run(self, name: str, check: Callable[[], Awaitable[None]]) -> None:
        try:
            await check()
        except Exception:  # noqa: BLE001 - every failure is reported, then the next check runs
            self.failed.append(name)
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
        else:
            self.passed += 1
            print(f"ok   {name}", flush=True)


def file_text(vault: Path, rel: str) -> str:
    return (vault / rel).read_text(encoding="utf-8")


def file_lines(vault: Path, rel: str) -> list[str]:
    return file_text(vault, rel).split("\n")


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A successful call's structured result."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"{tool}({args}) failed: {text}"
    assert result.structured_content == json.loads(text), "text and structured content differ"
    return result.structured_content


async def tool_error(session: ClientSession, tool: str, args: dict[str, Any], *needles: str) -> str:
    """A call that must come back as a tool error whose message holds every needle."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    assert result.is_error, f"{tool}({args}) should be a tool error, got: {text[:300]}"
    for needle in needles:
        assert needle.lower() in text.lower(), f"{tool}({args}): {needle!r} not in {text!r}"
    return text


async def check_everything(session: ClientSession, vault: Path, checks: Checks) -> None:
    """Every tool and the resources, on the obsidian-starter-vault copy."""

    async def initialize() -> None:
        init = await session.initialize()
        assert init.server_info.name == "quire", init.server_info
        assert init.capabilities.tools is not None and init.capabilities.resources is not None
        assert "read-only" in (init.instructions or "")

    await checks.run("initialize", initialize)

    async def list_tools() -> None:
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS, [t.name for t in tools]
        for t in tools:
            assert t.input_schema.get("type") == "object", t.name
            assert t.description and len(t.description) > 40, t.name
            assert t.annotations is not None and t.annotations.read_only_hint is True, t.name
        by_name = {t.name: t for t in tools}
        search = by_name["search_notes"].input_schema
        assert search["required"] == ["query"], search
        assert set(search["properties"]) == {"query", "k", "mode", "folder", "tag", "where", "since", "until", "explain"}, search
        assert "path" in by_name["get_note"].input_schema["required"]

    await checks.run("tools/list: six tools, each with an input schema", list_tools)

    async def search() -> None:
        found = await call(session, "search_notes", {"query": "enceladus ice thickness", "k": 3})
        assert found["mode"] == "bm25", found["mode"]
        top = found["results"][0]
        assert top["path"] == ICE, [r["path"] for r in found["results"]]
        assert top["title"] == "Enceladus Ice Thickness"
        assert len(found["results"]) <= 3
        lines = file_lines(vault, ICE)
        for section in top["sections"]:
            assert 1 <= section["start_line"] <= section["end_line"] <= len(lines), section
            assert isinstance(section["heading_path"], list)
            assert section["snippet"]
        headed = [s for s in top["sections"] if s["heading_path"] == ["Enceladus Ice Thickness", "Note"]]
        assert headed and (headed[0]["start_line"], headed[0]["end_line"]) == (12, 17), top["sections"]
        assert "thick" in headed[0]["snippet"]

    await checks.run("search_notes finds the note a word is in, with line ranges", search)

    async def search_filters() -> None:
        in_projects = await call(session, "search_notes", {"query": "project", "folder": "Projects", "k": 20})
        assert in_projects["results"], "nothing under Projects"
        assert all(r["path"].startswith("Projects/") for r in in_projects["results"]), in_projects
        tagged = await call(session, "search_notes", {"query": "enceladus", "tag": "geysers"})
        assert [r["path"] for r in tagged["results"]] == ["Notes/Enceladus Geysers Potential Causes.md"], tagged
        nothing = await call(session, "search_notes", {"query": "zzqxv unlikelyword"})
        assert nothing["results"] == [] and "hint" in nothing
        concepts = await call(session, "search_notes", {"query": "concept", "where": ["document_type=concept"], "k": 20})
        assert concepts["results"], concepts
        for r in concepts["results"]:
            assert "document_type: concept" in (vault / r["path"]).read_text(), r["path"]

    await checks.run("search_notes filters by folder, tag and frontmatter", search_filters)

    async def get_note() -> None:
        whole = await call(session, "get_note", {"path": "Notes/Enceladus Ice Thickness"})
        raw = (vault / ICE).read_bytes()
        assert whole["path"] == ICE
        assert whole["sha256"] == hashlib.sha256(raw).hexdigest()
        assert whole["title"] == "Enceladus Ice Thickness"
        lines = file_lines(vault, ICE)
        assert whole["line_count"] == 17 and (whole["start_line"], whole["end_line"]) == (1, 17)
        assert whole["text"] == raw.decode().rstrip("\n")
        assert whole["truncated"] is False
        some = await call(session, "get_note", {"path": ICE, "lines": "8-10"})
        assert some["text"] == "\n".join(lines[7:10]), some["text"]
        assert some["text"].startswith("# Enceladus Ice Thickness")
        section = await call(session, "get_note", {"path": "notes/enceladus ice thickness.md", "heading": "Note"})
        assert (section["start_line"], section["end_line"]) == (12, 17), section
        assert section["text"].startswith("## Note")
        by_name = await call(session, "get_note", {"path": "Enceladus Ice Thickness"})
        assert by_name["path"] == ICE

    await checks.run("get_note reads the file: text, lines, heading, sha256", get_note)

    async def get_note_bounded() -> None:
        big = await call(session, "get_note", {"path": "Big.md"})
        assert big["truncated"] is True and big["start_line"] == 1
        assert len(big["text"].encode()) <= 40_000
        lines = file_lines(vault, "Big.md")
        assert big["text"] == "\n".join(lines[: big["end_line"]])
        assert f'lines="{big["end_line"] + 1}-' in big["next"], big["next"]
        rest_spec = big["next"].split('lines="')[1].split('"')[0]
        rest = await call(session, "get_note", {"path": "Big.md", "lines": rest_spec})
        assert rest["start_line"] == big["end_line"] + 1

    await checks.run("get_note cuts long text at a line with a hint to page", get_note_bounded)

    async def outline() -> None:
        got = await call(session, "get_outline", {"path": ICE})
        assert got["title"] == "Enceladus Ice Thickness" and got["line_count"] == 17
        h1 = got["headings"][0]
        assert (h1["text"], h1["level"], h1["line"], h1["end_line"]) == ("Enceladus Ice Thickness", 1, 8, 17)
        assert [(c["text"], c["line"], c["end_line"]) for c in h1["children"]] == [("Note", 12, 17)]

    await checks.run("get_outline gives the heading tree with line ranges", outline)

    async def related() -> None:
        ice = await call(session, "find_related_notes", {"path": ICE})
        assert DASHBOARD in [n["path"] for n in ice["outgoing"]], ice
        assert "similar_unavailable" in ice  # BM25-only server: no vectors
        dashboard = await call(session, "find_related_notes", {"path": DASHBOARD, "k": 5})
        assert ICE in [n["path"] for n in dashboard["backlinks"]], dashboard
        assert dashboard["backlinks_total"] >= 1

    await checks.run("find_related_notes gives backlinks and outgoing links", related)

    async def list_notes() -> None:
        notes_dir = sorted(p.name for p in (vault / "Notes").glob("*.md"))
        listed = await call(session, "list_notes", {"folder": "Notes"})
        assert listed["total"] == len(notes_dir) == 5, listed["total"]
        assert sorted(r["path"].split("/")[-1] for r in listed["notes"]) == notes_dir
        row = next(r for r in listed["notes"] if r["path"] == ICE)
        assert row["sha256"] == hashlib.sha256((vault / ICE).read_bytes()).hexdigest()
        assert "enceladus" in row["tags"]
        page = await call(session, "list_notes", {"folder": "Notes", "limit": 2})
        assert page["returned"] == 2 and page["next_offset"] == 2 and "offset=2" in page["hint"]
        last = await call(session, "list_notes", {"folder": "Notes", "limit": 2, "offset": 4})
        assert last["returned"] == 1 and "next_offset" not in last
        tagged = await call(session, "list_notes", {"tag": "enceladus"})
        assert {r["path"] for r in tagged["notes"]} == {ICE, "Notes/Enceladus Geysers Potential Causes.md"}
        typed = await call(session, "list_notes", {"property": "document_type=note", "folder": "Notes"})
        assert ICE in [r["path"] for r in typed["notes"]]

    await checks.run("list_notes filters and pages manifest rows", list_notes)

    async def tree() -> None:
        everything = await call(session, "list_notes", {"limit": 1})
        whole = await call(session, "vault_tree", {})
        assert whole["tree"]["note_count"] == everything["total"] > 50
        folders = {c["name"]: c for c in whole["tree"]["children"] if c["kind"] == "folder"}
        assert folders["Notes"]["note_count"] == 5, folders.keys()
        sub = await call(session, "vault_tree", {"folder": "Notes"})
        assert sub["tree"]["path"] == "Notes"
        assert ICE in [c["path"] for c in sub["tree"]["children"]]

    await checks.run("vault_tree gives folders and notes with counts", tree)

    async def resources() -> None:
        listed = await session.list_resources()
        uris = {r.uri for r in listed.resources}
        uri = "quire://note/Notes/Enceladus%20Ice%20Thickness.md"
        assert uri in uris, sorted(uris)[:5]
        read = await session.read_resource(uri)
        assert read.contents[0].text == file_text(vault, ICE)
        assert read.contents[0].mime_type == "text/markdown"
        templates = await session.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "quire://note/{path}"
        for other in ["quire://folder/Notes", "file:///etc/passwd"]:
            try:
                await session.read_resource(other)
            except MCPError as e:
                assert "unknown resource" in e.message and "quire://note/" in e.message, e.message
            else:
                raise AssertionError(f"{other} was read")

    await checks.run("resources: each note as quire://note/{path}", resources)

    async def traversal() -> None:
        for path in ["../x", "../../etc/passwd", "/etc/passwd", "%2e%2e/x", "%252e%252e/etc/passwd", "Notes/../../x"]:
            await tool_error(session, "get_note", {"path": path}, "outside the vault")
        await tool_error(session, "get_note", {"path": "escape.md"}, "outside the vault")
        await tool_error(session, "get_note", {"path": "escape"}, "outside the vault")
        await tool_error(session, "get_outline", {"path": "/etc/passwd"}, "outside the vault")
        await tool_error(session, "find_related_notes", {"path": "../x"}, "outside the vault")
        for uri in ["quire://note/%2e%2e/x", "quire://note/escape.md", "quire://note//etc/passwd"]:
            try:
                await session.read_resource(uri)
            except MCPError as e:
                assert "outside the vault" in e.message, e.message
            else:
                raise AssertionError(f"{uri} was read")

    await checks.run("traversal (.., absolute, percent-encoded, symlink out) is refused", traversal)

    async def malformed() -> None:
        await tool_error(session, "get_note", {}, "missing field `path`")
        await tool_error(session, "search_notes", {"query": 3}, "invalid type")
        await tool_error(session, "search_notes", {"query": "x", "k": -1}, "-1")
        await tool_error(session, "search_notes", {"query": "x", "k": 0}, "from 1 to 50, not 0")
        await tool_error(session, "search_notes", {"query": "x", "mode": "psychic"}, "unknown variant")
        await tool_error(session, "search_notes", {"query": "   "}, "empty")
        await tool_error(session, "find_related_notes", {"path": ICE, "k": "ten"}, "invalid type")
        await tool_error(session, "list_notes", {"limit": 1000}, "from 1 to 200, not 1000")
        await tool_error(session, "get_outline", {"path": ICE, "depth": 2}, "unknown field")
        await tool_error(session, "get_note", {"path": ICE, "lines": "9-3"}, "bad line range")
        await tool_error(session, "get_note", {"path": ICE, "lines": "1-2", "heading": "Note"}, "not both")
        await tool_error(session, "get_note", {"path": ICE, "heading": "No Such Heading"}, "no heading")
        await tool_error(session, "get_note", {"path": "No/Such Note"}, "no note matches")
        await tool_error(session, "vault_tree", {"folder": "Nope"}, "no folder")
        try:
            await session.call_tool("delete_note", {"path": ICE})
        except MCPError as e:
            assert "unknown tool" in e.message
        else:
            raise AssertionError("an unknown tool was called")

    await checks.run("malformed arguments are tool errors", malformed)

    async def still_serving() -> None:
        found = await call(session, "search_notes", {"query": "enceladus ice thickness", "k": 1})
        assert found["results"][0]["path"] == ICE

    await checks.run("the server keeps answering after errors", still_serving)


def prepare_vault(args: argparse.Namespace, indexed: bool) -> None:
    """The vault copy (`args.vault`) and its index directory (`args.index_dir`)."""
    args.vault = args.workdir / "vault"
    args.index_dir = args.workdir / "index"
    shutil.copytree(args.corpus, args.vault, symlinks=False)
    lines = [f"Line {i} of a long note, with some words to fill it up." for i in range(1, 3001)]
    (args.vault / "Big.md").write_text("# Big\n\n" + "\n".join(lines) + "\n")
    outside = args.workdir / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNot part of the vault.\n")
    (args.vault / "escape.md").symlink_to(outside / "secret.md")
    args.index_dir.mkdir()
    if indexed:
        subprocess.run(
            [str(args.quire), "--vault", str(args.vault), "--index-dir", str(args.index_dir),
             "--no-embeddings", "index"],
            check=True, stdout=subprocess.DEVNULL,
        )


def server_args(args: argparse.Namespace, *extra: str) -> list[str]:
    return ["--vault", str(args.vault), "--index-dir", str(args.index_dir), "--no-embeddings", "mcp", *extra]


async def scenario_stdio(args: argparse.Namespace, checks: Checks) -> None:
    prepare_vault(args, indexed=True)
    params = StdioServerParameters(command=str(args.quire), args=server_args(args, "--no-watch"))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await check_everything(session, args.vault, checks)

    async def modern() -> None:
        # `Client` probes `server/discover` first and so negotiates the newest protocol.
        async with Client(params) as client:
            assert client.protocol_version == "2026-07-28", client.protocol_version
            outline = await client.call_tool("get_outline", {"path": ICE})
            assert outline.structured_content["headings"][0]["line"] == 8
            refused = await client.call_tool("get_note", {"path": "../x"})
            assert refused.is_error and "outside the vault" in refused.content[0].text

    await checks.run("the 2026-07-28 protocol (server/discover) answers too", modern)


def http_status(url: str, method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None) -> int:
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def start_http_server(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`quire mcp --http 127.0.0.1:0`, its endpoint URL (read from stderr) and its log."""
    server = subprocess.Popen(
        [str(args.quire), *server_args(args, "--no-watch", "--http", "127.0.0.1:0")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert server.stderr is not None
    log: list[str] = []
    url = ""
    deadline = time.monotonic() + 30
    while not url and time.monotonic() < deadline:
        line = server.stderr.readline()
        if not line:
            break
        log.append(line)
        if "listening on " in line:
            url = line.split("listening on ", 1)[1].strip()
    # Keep reading so the server never blocks on a full pipe.
    threading.Thread(target=lambda: log.extend(server.stderr), daemon=True).start()
    if not url:
        server.kill()
        raise RuntimeError(f"the HTTP server did not start: {''.join(log)}")
    return server, url, log


async def scenario_http(args: argparse.Namespace, checks: Checks) -> None:
    prepare_vault(args, indexed=True)
    server, url, log = start_http_server(args)
    try:
        await http_checks(args, url, checks)
    finally:
        server.terminate()
        server.wait(timeout=10)
        print("".join(log), end="", file=sys.stderr)


async def http_checks(args: argparse.Namespace, url: str, checks: Checks) -> None:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await check_everything(session, args.vault, checks)

    async def guarded() -> None:
        base = url.rsplit("/mcp", 1)[0]
        assert http_status(base + "/other") == 404
        init = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        assert http_status(url, "POST", headers | {"Origin": "http://evil.example"}, init) == 403
        assert http_status(url, "POST", headers | {"Host": "evil.example"}, init) in (400, 403, 421)

    await checks.run("HTTP: only /mcp, no browser origins, loopback hosts only", guarded)


async def scenario_fresh(args: argparse.Namespace, checks: Checks) -> None:
    """A watching server: notes written while it runs are found without a restart."""
    prepare_vault(args, indexed=False)
    params = StdioServerParameters(command=str(args.quire), args=server_args(args, "--debounce-ms", "200"))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def poll(query: str, want: str | None, timeout: float = 20.0) -> float:
            started = time.monotonic()
            while True:
                found = await call(session, "search_notes", {"query": query, "k": 5})
                paths = [r["path"] for r in found["results"]]
                if (want in paths) if want else not paths:
                    return time.monotonic() - started
                if time.monotonic() - started > timeout:
                    raise AssertionError(f"{query!r}: still {paths} after {timeout}s")
                await asyncio.sleep(0.2)

        async def added() -> None:
            await poll("quokkaflux", None, timeout=0)
            note = args.vault / "Inbox" / "Fresh idea.md"
            note.write_text("# Fresh idea\n\n## Plan\nThe quokkaflux capacitor needs a second coil.\n")
            seconds = await poll("quokkaflux", "Inbox/Fresh idea.md")
            print(f"     found the new note after {seconds:.1f}s", flush=True)
            got = await call(session, "get_note", {"path": "Inbox/Fresh idea", "heading": "Plan"})
            assert got["text"] == "## Plan\nThe quokkaflux capacitor needs a second coil."
            listed = await call(session, "list_notes", {"folder": "Inbox"})
            deadline = time.monotonic() + 20
            while "Inbox/Fresh idea.md" not in [r["path"] for r in listed["notes"]]:
                assert time.monotonic() < deadline, listed
                await asyncio.sleep(0.2)
                listed = await call(session, "list_notes", {"folder": "Inbox"})

        await checks.run("a note added while serving is found by search_notes", added)

        async def edited() -> None:
            note = args.vault / "Notes" / "Solar Cycle Duration.md"
            note.write_text(note.read_text() + "\nSee also the zorblatt anomaly.\n")
            await poll("zorblatt", "Notes/Solar Cycle Duration.md")

        await checks.run("an edited note is found by its new words", edited)

        async def removed() -> None:
            (args.vault / "Inbox" / "Fresh idea.md").unlink()
            await poll("quokkaflux", None)

        await checks.run("a removed note leaves the results", removed)


async def scenario_noindex(args: argparse.Namespace, checks: Checks) -> None:
    """No index and no watcher: search says what to do; the file-based tools still answer."""
    prepare_vault(args, indexed=False)
    params = StdioServerParameters(command=str(args.quire), args=server_args(args, "--no-watch"))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def search_explains() -> None:
            await tool_error(session, "search_notes", {"query": "enceladus"}, "no usable index", "quire index --vault")

        await checks.run("search_notes without an index says how to build one", search_explains)

        async def files_still_answer() -> None:
            got = await call(session, "get_note", {"path": ICE, "lines": "8"})
            assert got["text"] == "# Enceladus Ice Thickness"
            outline = await call(session, "get_outline", {"path": ICE})
            assert outline["headings"][0]["line"] == 8
            tree = await call(session, "vault_tree", {})
            assert tree["tree"]["note_count"] > 50

        await checks.run("get_note, get_outline and vault_tree need no index", files_still_answer)


def vault_hashes(vault: Path) -> dict[str, str]:
    """sha256 of every file of the vault (links not followed)."""
    out = {}
    for path in sorted(vault.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(vault))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


async def scenario_proposals(args: argparse.Namespace, checks: Checks) -> None:
    """`quire mcp --allow-proposals`: the client proposes, nothing is written; the user applies."""
    prepare_vault(args, indexed=True)
    before = vault_hashes(args.vault)
    params = StdioServerParameters(
        command=str(args.quire), args=server_args(args, "--no-watch", "--allow-proposals"))
    made: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()

        async def listed() -> None:
            assert "propose_note_change" in (init.instructions or ""), init.instructions
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == TOOLS | {"propose_note_change"}, sorted(tools)
            propose = tools["propose_note_change"]
            assert propose.annotations is not None and propose.annotations.read_only_hint is False
            assert propose.annotations.destructive_hint is False
            schema = propose.input_schema
            assert set(schema["required"]) == {"path", "change", "text"}, schema
            assert set(schema["properties"]) == {"path", "change", "text", "heading", "title"}, schema

        await checks.run("tools/list: the six tools and propose_note_change", listed)

        async def append() -> None:
            result = await call(session, "propose_note_change", {
                "path": ICE, "change": "append", "heading": "Open questions",
                "text": "- How thick is the ice at the south pole?", "title": "A question to keep",
            })
            assert result["status"] == "pending", result
            assert result["files"] == [ICE], result
            assert result["title"] == "A question to keep"
            assert "+- How thick is the ice at the south pole?" in result["diff"], result["diff"]
            assert f"--- a/{ICE}" in result["diff"]
            assert "Nothing was written" in result["next"]
            stored = json.loads((args.index_dir / "proposals" / f"{result['id']}.json").read_text())
            assert stored["status"] == "pending" and stored["changes"][0]["kind"] == "append", stored
            assert stored["changes"][0]["base_sha256"] == before[ICE]
            made["append"] = result["id"]

        await checks.run("propose_note_change appends under a heading as a pending proposal", append)

        async def create() -> None:
            result = await call(session, "propose_note_change", {
                "path": "Ideas/Europa.md", "change": "create", "text": "# Europa\n\nAnother ocean.\n"})
            assert result["diff"].startswith("--- /dev/null\n+++ b/Ideas/Europa.md"), result["diff"]
            assert not (args.vault / "Ideas").exists()

        await checks.run("propose_note_change creates a note as a proposal only", create)

        async def refused() -> None:
            await tool_error(session, "propose_note_change",
                             {"path": "../outside.md", "change": "create", "text": "x"}, "outside the vault")
            await tool_error(session, "propose_note_change",
                             {"path": "notes.txt", "change": "create", "text": "x"}, ".md")
            await tool_error(session, "propose_note_change",
                             {"path": ICE, "change": "create", "text": "x"}, "already exists")
            await tool_error(session, "propose_note_change",
                             {"path": "Nope.md", "change": "append", "text": "x"}, "no such file")
            await tool_error(session, "propose_note_change",
                             {"path": ICE, "change": "delete", "text": "x"}, "change")
            await tool_error(session, "propose_note_change",
                             {"path": "escape.md", "change": "replace", "text": "x"}, "symbolic link")

        await checks.run("bad proposals are tool errors", refused)

    async def nothing_written() -> None:
        assert vault_hashes(args.vault) == before, "the vault changed while only proposals were made"

    await checks.run("the vault is byte-for-byte unchanged", nothing_written)

    async def user_applies() -> None:
        out = subprocess.run(
            [str(args.quire), "--vault", str(args.vault), "--index-dir", str(args.index_dir),
             "proposals", "apply", made["append"]],
            capture_output=True, text=True, check=True)
        assert "applied" in out.stdout, out.stdout
        text = file_text(args.vault, ICE)
        assert text.rstrip().endswith("- How thick is the ice at the south pole?"), text[-300:]
        after = vault_hashes(args.vault)
        assert {k for k in after if after[k] != before.get(k)} == {ICE}

    await checks.run("the user applies it with quire proposals apply", user_applies)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True, choices=["stdio", "http", "fresh", "noindex", "proposals"])
    parser.add_argument("--quire", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True, help="the vault to copy")
    parser.add_argument("--workdir", type=Path, required=True, help="an empty directory")
    args = parser.parse_args()
    checks = Checks()
    scenario = {
        "stdio": scenario_stdio,
        "http": scenario_http,
        "fresh": scenario_fresh,
        "noindex": scenario_noindex,
        "proposals": scenario_proposals,
    }[args.scenario]
    await asyncio.wait_for(scenario(args, checks), timeout=240)
    print(f"{checks.passed} passed, {len(checks.failed)} failed", flush=True)
    return 1 if checks.failed or checks.passed == 0 else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(asyncio.run(main()))
