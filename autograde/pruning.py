"""Pruning in nbgrader's Autograde (every route: `python -m autograde`'s workers, `nbgrader autograde`, the
formgrader's Autograde button): `PruneCells`, a preprocessor before Execute, marks the cells the grade does not
depend on (autograde/prune.py) so that Execute skips them and their outputs say they were not run for the grade.

    c.PruneCells.enabled = False      # every cell executed (`python -m autograde ... --full` does this per run)

nbgrader's Validate gets the same analysis through nbclient's hook (prune.validate_hook, nbgrader_config.py).
"""

from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from . import prune


class PruneCells(NbGraderPreprocessor):
    """Leave out of the run the cells the grade does not depend on (`enabled = False`: run every cell)."""

    release_directory = Unicode(
        "", help="the released lesson's folder (default: the course's release folder for the assignment)"
    ).tag(config=True)

    def _release(self, resources):
        """The fingerprints of the released notebook's code cells, or None when it cannot be found."""
        info = resources.get("nbgrader") or {}
        folder = self.release_directory
        if not folder and info.get("assignment"):
            from nbgrader.coursedir import CourseDirectory

            coursedir = CourseDirectory(parent=self)
            folder = coursedir.format_path(coursedir.release_directory, ".", info["assignment"])
        path = Path(folder or ".") / f"{info.get('notebook', '')}.ipynb"
        if not folder or not path.is_file():
            return None
        return prune.release_fingerprints(nbformat.read(str(path), as_version=4))

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            prune.unmark(cell)  # whatever the submission says, only this preprocessor marks cells
        release = self._release(resources)
        plan = prune.apply(nb, release)
        resources.setdefault("nbgrader", {})["not_run"] = list(plan.skip)
        self.log.info("Pruned for the grade: %s%s", plan.summary(), "" if release else " (no release found)")
        return nb, resources

    def __call__(self, nb, resources):
        if not self.enabled:  # the switch: every cell runs, and no cell skips because the submission says so
            for cell in nb.cells:
                prune.unmark(cell)
            return nb, resources
        return self.preprocess(nb, resources)
