"""Code that runs inside the sandbox, stdlib only at import.

These files are copied into every sandbox and run there as plain scripts (their imports
of one another are top-level: `import frames`). The grader also imports `probes` from
here, to drive the reference engine with the very same code that drives a student's, and
`processes`, to find a sandbox's processes below its template as the template does.
Nothing here may import the grader, and nothing here holds a secret: a student's code
can read all of it.
"""
