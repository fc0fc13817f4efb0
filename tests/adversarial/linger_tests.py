"""An accomplice's tests (issue 41): a test that passes everywhere after a while, so that each run of them, and what
it leaves or answers at import (vote_notes.py, vote_socket.py), lasts while another student's grading runs."""

import time


def test_takes_its_time():
    time.sleep(2.0)
