"""cover._memory: glibc's mapping threshold and heap trim, a no-op elsewhere."""

from __future__ import annotations

import platform
import subprocess
import sys


def test_the_threshold_is_set_once_on_glibc_and_trim_runs():
    # In a child: the setting is process-wide and stays for the process's life.
    code = ("from cover._memory import map_large_blocks, trim; a = map_large_blocks(); "
            "b = map_large_blocks(); trim(); print(a, b)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    glibc = platform.libc_ver()[0] == "glibc"
    assert out == [str(glibc), str(glibc)]
