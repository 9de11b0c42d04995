"""`load_sessions` gives each session a readable label beside its key (file stem, or the
folder of a generically named DSH log)."""
from __future__ import annotations

from pathlib import Path

from workbench.frames.many import load_sessions, session_label

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def test_labels_from_the_file_or_its_folder():
    assert session_label("/x/dev-killed__session.v4.jsonl") == "dev-killed__session"
    assert session_label("/root/proj/3f2a-uuid/session.v4.jsonl.zstd") == "3f2a-uuid"
    assert session_label("/root/session.jsonl") == "root"


def test_sessions_frame_has_a_label_beside_the_key():
    paths = sorted(SAMPLES.glob("*.jsonl"))[:2]
    frames = load_sessions(paths, workers=1, progress=False)
    sessions = frames["sessions"]
    assert list(sessions.columns[:2]) == ["session", "session_label"]
    assert sessions["session_label"].tolist() == [session_label(str(p)) for p in paths]
    assert str(sessions["session_label"].dtype) == "string"
