"""The nbgrader exchange as the course configures it (`c.ExchangeFactory.submit`, hub/jupyterhub_config.py).

nbgrader's submit step compares the released notebooks with the student's folder, checkpoints included, so every
submission of a notebook that JupyterLab had saved logged `.ipynb_checkpoints/…: EXTRA` (the checkpoints are not
copied: `CourseDirectory.ignore`). This submit step compares the notebooks that are submitted.
"""

from pathlib import Path

from nbgrader.exchange.default import ExchangeSubmit
from nbgrader.utils import find_all_notebooks


def submitted_notebooks(folder):
    """The notebooks under `folder` that a submission carries (not JupyterLab's checkpoints)."""
    return {name for name in find_all_notebooks(folder) if ".ipynb_checkpoints" not in Path(name).parts}


class SubmitWithoutCheckpoints(ExchangeSubmit):
    def check_filename_diff(self):
        released, submitted = submitted_notebooks(self.release_path), submitted_notebooks(self.src_path)
        missing, extra = sorted(released - submitted), sorted(submitted - released)
        if not (missing or extra):
            return
        diff = f"missing: {', '.join(missing) or 'none'}; extra: {', '.join(extra) or 'none'}"
        if missing and self.strict:
            self.fail(f"Assignment {self.coursedir.assignment_id} not submitted: notebooks are missing ({diff}).")
        self.log.warning(f"Submitted {self.coursedir.assignment_id} with other notebooks than released ({diff}).")
