"""`grader batch`: grade a class's submissions, one result per student, nothing lost."""
