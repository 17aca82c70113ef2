"""What the tests, tools, grading and benchmark share (never shipped to students).

paths     the course root, the lessons, their notebooks and per-lesson facts (lesson.toml)
course    a temporary copy of the course; submissions built from a solution's answers
env       the environment with this Python first on PATH (kernels, nbgrader, alembic)
nbclient_fix      the work-around for jupyter/nbclient#312, applied where notebooks are executed
widget_driver     changes explorers' controls inside a kernel (tests and benchmark)
"""
