"""Planted by aaron under his classmate's name: a stub with no Value at all, meant to be
graded as alice (0 points) while alice's real work is pushed aside."""

PLANTED_BY = "aaron"
