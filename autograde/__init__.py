"""Grade one lesson for a whole class with nbgrader, so that no student can subvert it.

The steps, one module each (see README.md in this folder):
  collect   LMS folder or exchange -> STATE/submitted/<student>/<lesson>/ (one row per submitted file)
  repairs   make each submission gradable against the release (REPAIRS, a declared list)
  tamper    static rules (RULES) on the student's code
  prepare   one student's notebooks repaired and scanned, and whether they changed since last graded
  canary    the lesson's solution and its blank graded first; refuse the batch if they are not full / 0
  sandbox   every notebook's kernel in a bubblewrap sandbox (sandbox.py, execute.py), with limits per
            notebook for all its processes (containment.py: a cgroup, or measured)
  guard     the tests run by an audit hook in the kernel, outcomes as authenticated plain data
            (guard.py on the grader's side, kernel_guard.py in the kernel)
  worker    long-lived workers: nbgrader's Autograde + feedback, against a private gradebook copy
  pool      the command's side of the workers: one job at a time, a wall-clock cap, restarts
  gradebook snapshot, fresh-clone set-up, one transaction per student
  feedback  feedback pages without the hidden tests
  report    grades.csv, summary.txt, summary.png
  batch     the phases in order (PHASES), for one lesson (run)
  cli       the command: python -m autograde LESSON SUBMISSIONS (or autograde/grade.py, make grade)

What they share: cells (nbgrader's cell roles), course (the course root and its configuration), messages
(the jobs and results between the command and its workers), roster, errors (GradingError).
The package imports nothing from course_dev (the development tools), which may import it.
"""
