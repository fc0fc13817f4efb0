"""Where a student's code runs: sandboxes that never let it lie, read a secret, or touch anyone else.

- isolation.py: what this machine offers (bubblewrap namespaces, a uid per sandbox, or
  resource limits only), and what each job accepts;
- uids.py: unprivileged uids leased under a lock, unique on the machine;
- supervisor.py: the trusted side that starts sandboxes and their units of work, and cleans
  between units (folders.py: its folders on the host; space.py: its writable space);
- wipe.py: removing what a sandbox wrote, without recursion, with the grader's authority;
- watch.py: a sandbox's memory (and, without namespaces, disk) summed from the host;
- channel.py: every reply read as untrusted input, with a size cap and a deadline;
- inside/: the code that runs in the sandbox (stdlib only; no secret in it).
"""
