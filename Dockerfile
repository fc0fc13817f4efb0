# The grader in a container: the route for instructors (and students) on macOS and Windows, and on any
# machine where bubblewrap cannot run. Inside, the grader runs as root without bubblewrap (a default
# container cannot make namespaces), so each sandbox runs as a fresh unprivileged uid of its own ("uid
# mode", as on Gradescope): the grader checks, by trying, that it cannot read the grader, the reference,
# the assignment or the class's files. How to build and use it, and what it isolates: docs/platforms.md.
#
#   docker build -t micrograd-grader .
#   docker run --rm -v micrograd-secret:/root/.config/micrograd-grader -v "$PWD/course:/course" \
#       micrograd-grader batch /course/submissions.zip --out /course/graded
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GRADER_NO_BWRAP=1 \
    GRADER_SANDBOX_PYTHON=/opt/micrograd-sandbox/bin/python

# The Python student code runs on: readable by everyone, holding only what student code may use.
RUN python3 -m venv /opt/micrograd-sandbox \
    && /opt/micrograd-sandbox/bin/pip install --quiet pytest ipython

# The grader, its reference engine, the wheats and the assignments: readable by root only.
COPY pyproject.toml README.md /opt/grader-source/
COPY grader /opt/grader-source/grader
COPY reference /opt/grader-source/reference
COPY assignments /opt/grader-source/assignments
COPY student_template /opt/grader-source/student_template
RUN python3 -m venv /opt/grader \
    && /opt/grader/bin/pip install --quiet /opt/grader-source \
    && rm -rf /opt/grader-source \
    && chmod -R go-rwx /opt/grader

ENV PATH=/opt/grader/bin:$PATH
WORKDIR /course
ENTRYPOINT ["grader"]
CMD ["--help"]
