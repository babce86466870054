"""moto's standalone server, tied to the lifetime of the process that started it.

Used by packages/aws-sdk-integ/test/moto-global-setup.ts instead of the bare `moto_server` entry point:
    .cache/moto-venv/bin/python scripts/moto-server.py --host 127.0.0.1 --port 0
The parent keeps this process's stdin open as a pipe. When the parent goes away for any reason, even SIGKILL,
the pipe reaches EOF and this process exits, so no orphaned moto server outlives a test run.
Arguments are moto_server's own (see `moto_server --help`).
"""

import os
import sys
import threading

from moto.server import main


def _exit_when_parent_goes() -> None:
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)


if __name__ == "__main__":
    threading.Thread(target=_exit_when_parent_goes, name="parent-watch", daemon=True).start()
    main(sys.argv[1:])
