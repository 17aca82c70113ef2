"""What the tests, tools and benchmark share (never shipped to students). It may use the grader (autograde:
the course root, cell roles, the nbclient work-around); the grader never imports it.

paths     the course root, the lessons, their notebooks and per-lesson facts (lesson.toml)
course    a temporary copy of the course; submissions built from a solution's answers
env       the environment with this Python first on PATH (kernels, nbgrader, alembic)
widget_driver     changes explorers' controls inside a kernel (tests and benchmark)
"""
