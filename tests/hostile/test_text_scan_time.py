"""The audit's text scans stay linear on lines built to defeat them. A run of word characters
broken by ``-`` or ``+`` ("-a-a-a…") gives the file-name and directory patterns a start at every
break, and each start used to consume the rest of the run before failing: 400 KB of it took
128 s in `workbench audit` (quadratic). Name and directory components are bounded at 255
characters (the longest file name of the usual file systems), so each start reads at most that.
Run in a subprocess with a timeout, so that a regression fails instead of hanging CI."""
from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.core.compaction.anchors import text_anchors
from workbench.core.compaction.probe import text_facts

_SCAN = r"""
import sys, time
from workbench.core.compaction.anchors import text_anchors
from workbench.core.compaction.probe import text_facts
text = sys.argv[1] * (400_000 // len(sys.argv[1]))
start = time.process_time()
text_facts(text)
text_anchors(text)
print(time.process_time() - start)
"""


@pytest.mark.parametrize("unit", ["-a", "a-", "+a", "1-", "aB-", "-a/", "@a"])
def test_a_long_broken_run_is_scanned_in_linear_time(unit):
    done = subprocess.run([sys.executable, "-c", _SCAN, unit], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 20, done.stdout   # seconds for 400 KB (the old scan: minutes)


def test_names_and_directories_up_to_255_characters_are_found_whole():
    name = "x-" * 127 + "y"                      # 255 characters
    assert ("paths", f"{name}.py") in text_facts(f"see {name}.py now")
    assert ("path", f"{name}.py") in text_anchors(f"see {name}.py now")
    directory = "d" * 255
    assert ("paths", f"/{directory}/file") in text_facts(f"in /{directory}/file here")
