"""The feedback log in SQLite: what a restart replays to resume the same thresholds.

WAL journal with ``synchronous=FULL``: a feedback row is acknowledged (200) only after
its transaction is committed and synced, so ``kill -9`` (or power loss) loses no
acknowledged feedback. ``(calibrator, qid)`` is unique: a repeated feedback is
ignored and answered as a duplicate (idempotent). The online state is a pure fold of
the log in ``seq`` order (:class:`cover.serve.feedback.OnlineState`), so nothing else
needs saving.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

from cover.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    calibrator TEXT NOT NULL,
    qid TEXT NOT NULL,
    score REAL,
    covered INTEGER NOT NULL,
    truth TEXT NOT NULL,
    received REAL NOT NULL,
    UNIQUE (calibrator, qid)
)
"""


class FeedbackStore:
    """One SQLite file (``:memory:`` keeps nothing across restarts)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:  # another file given as --state
            self._db.close()
            raise InputError(f"--state {path}: not a state file of cover serve ({exc}); "
                             "give a new file name, or the file an earlier run wrote"
                             ) from None
        self.lock = threading.Lock()

    def add(self, calibrator: str, qid: str, score: float | None, covered: bool,
            truth: Any) -> dict[str, Any] | None:
        """Insert and commit one feedback; None when new, else the stored one (a
        duplicate, left as it was). Call with :attr:`lock` held."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO feedback (calibrator, qid, score, covered, truth, "
            "received) VALUES (?, ?, ?, ?, ?, ?)",
            (calibrator, qid, score, int(covered), json.dumps(truth), time.time()))
        if cur.rowcount == 1:
            return None
        row = self._db.execute("SELECT score, covered FROM feedback WHERE calibrator = ? "
                               "AND qid = ?", (calibrator, qid)).fetchone()
        return {"score": row[0], "covered": bool(row[1])}

    def replay(self, calibrator: str) -> Iterator[tuple[str, float | None, bool]]:
        """``(qid, score, covered)`` of every feedback for ``calibrator``, in order."""
        cur = self._db.execute("SELECT qid, score, covered FROM feedback WHERE calibrator "
                               "= ? ORDER BY seq", (calibrator,))
        for qid, score, covered in cur:
            yield qid, score, bool(covered)

    def close(self) -> None:
        self._db.close()
