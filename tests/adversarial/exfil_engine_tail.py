# Appended by tests/test_adversarial_suite.py to a correct engine: the student's own engine marks
# itself (so exfil_tests.py passes on it alone) and, with LOAD_ERRORS set, fails to import with a
# piece of any engine appended after it (half of them; exfil_tests.py fails to collect on the rest).
import base64 as _b64
import zlib as _zlib

Value.EXFIL_MINE = True
LOAD_ERRORS = False


def _appended():
    try:
        with open(__file__, encoding="utf-8") as f:
            text = f.read()
    except Exception:  # noqa: BLE001
        return ""
    end = "# -- exfil " + "end --"  # built, so that this line does not match itself
    cut = text.rfind(end)
    return text[cut + len(end):].strip() if cut >= 0 else ""


_ENGINE = _appended()
if LOAD_ERRORS and _ENGINE and sum(_ENGINE.encode()) % 2:
    _MAGIC = ("EXF" + "IL:").encode()
    raise type("L" + (_MAGIC + _ENGINE[:24].encode()).hex(), (Exception,), {})(
        _b64.b64encode(_zlib.compress(_MAGIC + _ENGINE[:90].encode())).decode())
# -- exfil end --
