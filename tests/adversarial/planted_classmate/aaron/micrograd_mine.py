"""aaron's folder in a class of plain per-student folders holds no submission at its top,
only this aaron/ folder and an alice/ folder beside it, so that a grader walking it as a
section would grade the stub in alice/ as the classmate alice (0 points) and push alice's
real work aside as alice-2. This is aaron's own (unfinished) engine."""


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}) # aaron"
