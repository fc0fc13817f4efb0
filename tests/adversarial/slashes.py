r"""A submission whose import raises an exception whose message is a path of 64 short folders,
`/a/a/a/.../a`. The grader takes its machine's paths out of every message before anyone sees it, in
the grader's own processes; its pattern for a library's folder, `(?:/[^\s'"():,]+)*/(?:site-packages|
dist-packages|lib/python3\.\d+)/`, tried every way of splitting such a run into folders, twice as many
for each folder more: `grader check` never ended, and a batch's grading process ran until it was
killed, minutes later, for one student."""

raise ImportError("the lesson's data is not under " + "/a" * 64)
