"""The course's LMS on both sides of a batch: who each student is in the download (identity), the
class list the LMS exports (roster), and the files it imports back (export: grades and feedback)."""
