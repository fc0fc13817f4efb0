"""Removing and counting what a sandbox wrote (grader/sandbox/wipe.py, uids.owned_bytes), on real trees a student
could shape: 1,500 folders deep with names too long for any path to reach the bottom, read-only folders, links to
elsewhere, a pipe; and what must stay (a kept path, another user's entries in a shared folder)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from grader.sandbox import uids, wipe

NAME = "d" * 100


@pytest.fixture
def tmp_path():
    """A folder in memory where the machine has /dev/shm (1,500 folders made and removed on a disk take seconds)."""
    folder = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    yield folder
    wipe.remove(str(folder))  # a tree 1,500 deep left by a failing test is more than shutil.rmtree can remove


def deep(top: Path, depth: int = 1500) -> None:
    """A tree depth folders deep under top/tree, made one level at a time from the level above, a file at the
    bottom, its top folder read-only."""
    (top / "tree").mkdir()
    fd = os.open(top / "tree", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(NAME, dir_fd=fd)
        inner = os.open(NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
        f.write(b"x" * 10_000)
    os.close(fd)
    (top / "tree").chmod(0o555)


def test_a_tree_deeper_than_any_path_read_only_and_with_links_is_cleared(tmp_path):
    """Is everything in a folder removed (a tree 1,500 deep, read-only folders, a pipe), a link removed as itself
    with its target untouched, and a kept path and the folders on the way to it left?"""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("not the sandbox's")
    top = tmp_path / "space"
    top.mkdir()
    deep(top)
    (top / "notes" / "inner").mkdir(parents=True)
    (top / "notes" / "inner" / "n.txt").write_text("what a run saw")
    for folder in (top / "notes" / "inner", top / "notes"):
        folder.chmod(0o555)
    (top / "link").symlink_to(outside)
    os.mkfifo(top / "pipe")
    (top / "venv" / "lib").mkdir(parents=True)
    (top / "venv" / "lib" / "site.py").write_text("kept")
    (top / "venv" / "stray.txt").write_text("not kept")
    assert wipe.clear(str(top), keep=["venv/lib"]) == 0
    assert sorted(p.relative_to(top).as_posix() for p in top.rglob("*")) == ["venv", "venv/lib", "venv/lib/site.py"]
    assert (outside / "precious.txt").read_text() == "not the sandbox's"
    assert wipe.remove(str(top)) and not top.exists()


def test_a_shared_folder_loses_only_its_owners_entries(tmp_path):
    """In a folder other users share, are only the entries of the given owner removed (and whatever is in them)?"""
    mine, theirs = os.getuid(), os.getuid() + 1
    (tmp_path / "kept.txt").write_text("another user's")
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "inside.txt").write_text("x")
    if os.geteuid() == 0:
        os.chown(tmp_path / "kept.txt", theirs, theirs)
        assert wipe.clear(str(tmp_path), owner=mine) == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    else:  # only root can give a file away: everything here is the owner's
        assert wipe.clear(str(tmp_path), owner=theirs) == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["gone", "kept.txt"]


def test_a_folder_that_is_gone_is_clean_and_one_that_cannot_be_read_is_not(tmp_path):
    assert wipe.clear(str(tmp_path / "missing")) == 0
    (tmp_path / "file").write_text("x")
    assert wipe.clear(str(tmp_path / "file")) == 1  # not a folder: nothing in it could be removed


def test_the_space_of_a_deep_tree_is_counted_to_its_bottom(tmp_path):
    """Does the disk count reach the file at the bottom of a tree 1,500 deep (no path can name it)?"""
    deep(tmp_path, 1500)
    (tmp_path / "tree").chmod(0o755)
    counted = uids.owned_bytes(tmp_path, os.getuid(), 1 << 30)
    bottom = 10_000
    assert bottom <= counted < bottom + 64 * 1024, counted
    assert stat.S_ISDIR(os.stat(tmp_path / "tree").st_mode)
    assert wipe.remove(str(tmp_path / "tree"))
