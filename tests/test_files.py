"""files: a failed write leaves the old file whole and no temporary behind."""

from __future__ import annotations

import os

import pytest

from tvm_tgraph.files import atomic_write_bytes


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "data.json"
    atomic_write_bytes(path, b"old")
    assert path.read_bytes() == b"old" and oct(path.stat().st_mode)[-3:] == "644"

    def disk_full(fd):
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", disk_full)
        with pytest.raises(OSError, match="disk full"):
            atomic_write_bytes(path, b"new, never complete")
    assert path.read_bytes() == b"old" and [p.name for p in path.parent.iterdir()] == ["data.json"]
    atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new"
