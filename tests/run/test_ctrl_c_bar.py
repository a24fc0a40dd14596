"""Ctrl-C in a terminal: the progress bar is printed once. A terminal echoes "^C" where the
cursor is; on a bar as wide as the terminal the echo wrapped to a new line and the last redraw
of the bar went there, below the old one. The bar leaves two columns free, so the redraw
covers the echo."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SRC
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import GOLDS

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.mark.slow
def test_the_bar_leaves_room_for_the_echoed_ctrl_c(tmp_path: Path) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), latency=0.5) as server:
        env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="80", LINES="24", TERM="xterm",
                   NO_PROXY="127.0.0.1")
        args = [sys.executable, "-m", "hopscore", "run", "hotpotqa", "--gold",
                str(GOLDS["hotpotqa"][0]), "--model", "openai/a-rather-long-model-name-x",
                "--base-url", server.base_url, "-o", str(tmp_path / "run"), "--no-cache",
                "-c", "1"]
        pid, fd = pty.fork()
        if pid == 0:  # the child: the command, in a terminal of 80 columns
            # Ctrl-C at its default (a suite started in the background has it ignored)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvpe(sys.executable, args, env)
        out, started, sent = b"", time.monotonic(), False
        while time.monotonic() - started < 120:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                out += data
            if not sent and b"failed 0" in out and time.monotonic() - started > 2:
                os.kill(pid, signal.SIGINT)
                sent = True
        _, status = os.waitpid(pid, 0)
    assert sent and os.waitstatus_to_exitcode(status) == 130, out[-2000:]
    frames = [ANSI.sub(b"", frame) for frame in re.split(rb"\r\n|\r|\n", out)]
    bars = [frame.decode() for frame in frames if b"failed 0" in frame]
    assert bars, out[-2000:]
    assert max(len(bar) for bar in bars) <= 78, max(bars, key=len)
