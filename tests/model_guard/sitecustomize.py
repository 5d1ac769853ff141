"""Imported at start-up by every Python the tests launch (conftest puts this folder on PYTHONPATH).

Records each import of a model library (torch, transformers, sentence-transformers) in the file
`COURSE_MODEL_IMPORT_LOG` names, so conftest can fail a test not marked `model` whose subprocess
loaded one. The import itself goes ahead unchanged.
"""
from __future__ import annotations

import os
import sys

WATCHED = frozenset({"torch", "transformers", "sentence_transformers"})


class ModelImportRecorder:
    """A meta path finder that finds nothing: it only writes down a watched name being imported."""

    def __init__(self, log: str) -> None:
        self.log = log

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        """Append `fullname` to the log when it is a watched top-level module; never find it."""
        if fullname in WATCHED:
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(f"{fullname} (pid {os.getpid()})\n")


def install(log: str | None = None) -> None:
    """Put the recorder first on `sys.meta_path` (once), logging to `log` or the environment's file."""
    log = log or os.environ.get("COURSE_MODEL_IMPORT_LOG")
    if log and not any(isinstance(f, ModelImportRecorder) for f in sys.meta_path):
        sys.meta_path.insert(0, ModelImportRecorder(log))


install()
