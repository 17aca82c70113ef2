"""The one exception of the grader: the batch (or an export) cannot go on, and the message says why and what to
do, in the instructor's terms. Only the command line (cli.py) turns it into an exit status; from Python,
`autograde.cli.main([...])` returns the rows of grades.csv or raises it."""


class GradingError(Exception):
    """Grading refused or stopped; str(error) is the message for the instructor."""
