"""Folders 1,500 deep (each name 100 characters long, so no path can name the deepest) in /tmp, /dev/shm and
its working folder, made one level at a time from the level above; a file at the bottom, and the top folder
read-only. A recursive removal fails on them (RecursionError), and a removal by path cannot reach the bottom."""

import os

TOKEN = "__TOKEN__"
MADE = {}
for place in dict.fromkeys(["/tmp", "/dev/shm", os.getcwd()]):
    try:
        top = os.open(place, os.O_RDONLY | os.O_DIRECTORY)
        os.mkdir(TOKEN, dir_fd=top)
        fd = os.open(TOKEN, os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
        os.close(top)
        for depth in range(1500):
            os.mkdir("d" * 100, dir_fd=fd)
            inner = os.open("d" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("at the bottom")
        os.close(fd)
        os.chmod(os.path.join(place, TOKEN), 0o555)
        MADE[place] = "made"
    except OSError as exc:
        MADE[place] = type(exc).__name__


class Value:
    pass
