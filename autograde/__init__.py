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
(the jobs and results between the command and its workers; a student's record, StudentRecord, and
its Status), roster, errors (GradingError).
Where a score comes from, in order (each step can only lower it or flag it, never raise it):
  1. collect.py      the file is attributed to one person (or gets a row of its own saying it cannot be);
                     the latest of their files is chosen, a choice the download does not order is flagged
  2. repairs.py      the notebook is made gradable against the release; locked and test cells are restored
  3. tamper.py       static rules flag code that rebinds what the tests use (any binding syntax)
  4. canary.py       the lesson's solution must score full marks and its blank 0, else nobody is graded
  5. pruning.py      cells no grade depends on are left out (prune.py: identical to the release, defining nothing
                      a kept cell reads, changing no state; anything undecided runs; --full runs every cell)
  6. execute.py      the kernel runs in the sandbox (sandbox.py, containment.py) with the student's per-cell
                     limit; the grader's own cells (guard setup, final check) have their own bound
  7. kernel_guard.py each test runs in a namespace of its own (the notebook names it uses, never a builtin's
                     name; the lesson's imports as at set-up); state is compared around it (a library's own
                     lazy state, told by origin, is not a change); its outcome is sent as authenticated data
  8. guard.py        the outcomes become the test cells' outputs, which nbgrader's SaveAutoGrades scores
  9. worker.py       into a private gradebook; gradebook.py commits it to the real one in one transaction
                     (an id the grader made up is kept out of nbgrader's student list)
 10. report.py       grades.csv: scores, status, flags (a flag means `needs manual grading`)

The package imports nothing from course_dev (the development tools), which may import it.
"""
