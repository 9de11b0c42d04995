"""The audit's text scans stay linear in time and bounded in memory on lines built to defeat
them. A run of word characters broken by ``-`` or ``+`` ("-a-a-a…") gives the file-name and
directory patterns a start at every break, and each start used to consume the rest of the run
before failing: 400 KB of it took 128 s in `workbench audit` (quadratic). Name and directory
components are bounded at 255 characters (the longest file name of the usual file systems), so
each start reads at most that. A user's text is also cut into sentences for constraints, and
the sentence pattern kept a backtracking point per character: 120 bytes a character (1.2 GB for
10 MB of text; `workbench audit` of a valid 300 MB line was killed at 14 GB); a directory path
kept one per component. Run in a subprocess with a timeout, so that a regression fails instead
of hanging CI or the machine."""
from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.core.compaction.anchors import text_anchors
from workbench.core.compaction.probe import text_facts

_SCAN = r"""
import sys, time
from workbench.core.compaction.anchors import piece_anchors, text_anchors
from workbench.core.compaction.probe import text_facts
text = sys.argv[1] * (int(sys.argv[2]) // len(sys.argv[1]))
start = time.process_time()
text_facts(text)
text_anchors(text)
piece_anchors("user", text, frozenset())
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(time.process_time() - start, peak / 1024)
"""


def _scan(unit: str, chars: int) -> tuple[float, float]:
    done = subprocess.run([sys.executable, "-c", _SCAN, unit, str(chars)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seconds, peak_mib = map(float, done.stdout.split())
    return seconds, peak_mib


@pytest.mark.parametrize("unit", ["-a", "a-", "+a", "1-", "aB-", "-a/", "@a"])
def test_a_long_broken_run_is_scanned_in_linear_time(unit):
    seconds, _ = _scan(unit, 400_000)
    assert seconds < 20   # for 400 KB (the old scan: minutes)


@pytest.mark.parametrize("unit", ["abcdefghij", "a/", "A_B", "a-b. "])
def test_memory_of_a_long_text_scan_is_bounded(unit):
    _, peak_mib = _scan(unit, 10_000_000)
    assert peak_mib < 400, peak_mib   # 10 MB of text (the old sentence pattern: 1.2 GB)


def test_names_and_directories_up_to_255_characters_are_found_whole():
    name = "x-" * 127 + "y"                      # 255 characters
    assert ("paths", f"{name}.py") in text_facts(f"see {name}.py now")
    assert ("path", f"{name}.py") in text_anchors(f"see {name}.py now")
    directory = "d" * 255
    assert ("paths", f"/{directory}/file") in text_facts(f"in /{directory}/file here")
    assert ("path", f"/{directory}/file") in text_anchors(f"in /{directory}/file here")
