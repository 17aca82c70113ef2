"""Run a lesson's notebook headless and save its outputs into it (`make run NB=…`), as JupyterLab's Run All would:

    python -m attention_course.run notebooks/02_dot_product/02_dot_product.ipynb

A failing cell (an exercise not done yet) does not stop the run. One line per code cell shows the progress.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from attention_course import nbclient_fix


def run(path, out=sys.stdout):
    """Execute every code cell of the notebook at `path` in order; write the outputs back; return the failed cells."""
    path = Path(path)
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
        shutdown_kernel="immediate",  # the outputs are in: killed, not asked to exit (which waited about 0.8 s)
    )
    code = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    failed = []
    with client.setup_kernel():
        for n, index in enumerate(code, 1):
            start = time.perf_counter()
            cell = client.execute_cell(nb.cells[index], index)
            if any(o.output_type == "error" for o in cell.outputs):
                failed.append(n)
            print(
                f"cell {n}/{len(code)}: {time.perf_counter() - start:.1f} s",
                "(error)" if failed[-1:] == [n] else "",
                file=out,
            )
    nbformat.write(nb, str(path))
    return failed


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_file():
        sys.exit("usage: python -m attention_course.run <notebook.ipynb>  (make run NB=<notebook.ipynb>)")
    nbclient_fix.apply()  # jupyter/nbclient#312: a widget cell could otherwise wait forever
    failed = run(args[0])
    print(f"saved {args[0]}" + (f"; cells with an error (exercises to do?): {failed}" if failed else ""))


if __name__ == "__main__":
    main()
