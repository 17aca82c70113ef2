"""`jupyter nbconvert --to html` in a terminal of the student's JupyterLab (`make lab`, the student bundle, the class
hub, which put this folder on JUPYTER_CONFIG_PATH or in ~/.jupyter): the page draws its maths as MathML and fetches
nothing from the internet (attention_course.offline_maths), like JupyterLab's own Save and Export."""

c = get_config()  # noqa: F821  (provided by traitlets)
c.HTMLExporter.preprocessors = ["attention_course.offline_maths.MathML"]
