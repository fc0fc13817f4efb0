"""Holds memory no process's limit counts: many processes, each with files in memory (memfd, else
files in /dev/shm or the temporary folder, deleted at once so no folder names them), then says
how much it held, and in how many processes, as an import error: 'HELD <MB> MB IN <N> PROCESSES'."""

import os
import select
import time

CHILDREN, EACH_MB, CHUNK_MB = 24, 80, 16


def hold(mb):
    """Files in memory worth mb, kept open: how many MB this process got (memfd first, then deleted files in
    /dev/shm, then in the temporary folder, each until it is refused or full)."""
    held, kept = 0, []
    for source in ("memfd", "/dev/shm", os.environ.get("TMPDIR", "/tmp")):
        while held < mb:
            try:
                if source == "memfd":
                    fd = os.memfd_create("hog")
                else:
                    path = os.path.join(source, f"hog-{os.getpid()}-{held}")
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                    os.unlink(path)
            except (OSError, AttributeError):
                break
            kept.append(fd)
            got = 0
            try:
                for _ in range(CHUNK_MB):
                    got += os.write(fd, b"\1" * (1 << 20))
            except OSError:
                pass
            held += got / (1 << 20)
            if got < CHUNK_MB << 20:
                break
    return int(held), kept


started = time.monotonic()
reports = []
for _ in range(CHILDREN):
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        break
    if pid == 0:
        os.close(r)
        held, kept = hold(EACH_MB)
        os.write(w, f"{held}\n".encode())
        time.sleep(60)
        os._exit(0)
    os.close(w)
    reports.append(r)
mine, kept = hold(EACH_MB)
total, processes = mine, 1 + len(reports)
for r in reports:
    if select.select([r], [], [], max(0.0, started + 2.0 - time.monotonic()))[0]:
        total += int(os.read(r, 64).decode().strip() or 0)
time.sleep(max(0.0, started + 1.5 - time.monotonic()))  # held for a while, as a real hog would
raise RuntimeError(f"HELD {total} MB IN {processes} PROCESSES")
