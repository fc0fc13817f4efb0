"""Class insight: what a class got wrong, counted by misconception, and which submissions are worth a
second look as the same work. It reads graded results and students' code as data, and writes plain data
for the class page, summary.json and the reteach notebook; it never grades and never runs student code."""
