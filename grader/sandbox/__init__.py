"""Where a student's code runs: sandboxes that never let it lie, read a secret, or touch anyone else.

- isolation.py: what this machine offers (bubblewrap namespaces, a uid per sandbox, or
  resource limits only), and what each job accepts;
- uids.py: unprivileged uids leased under a lock, unique on the machine;
- supervisor.py: the trusted side that starts sandboxes and their units of work;
- channel.py: every reply read as untrusted input, with a size cap and a deadline;
- inside/: the code that runs in the sandbox (stdlib only; no secret in it).
"""
