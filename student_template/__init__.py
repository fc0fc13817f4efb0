"""The starter kit students receive (copied by `grader template DIR`)."""
