// "(view feedback)" in nbgrader's Assignment List runs `filebrowser:go-to-path` on the feedback folder
// (<lesson>/feedback/<timestamp>), which only moves the file browser. This plugin watches for that command and
// opens each feedback page in the folder as a JupyterLab tab (the HTML viewer; the page is static, maths as MathML).
//
// A JupyterLab federated extension written by hand, without a build: it imports no shared module (it only uses the
// application object every plugin is given), so the container shares nothing and `get` returns the module at once.
(function () {
  "use strict";
  const FEEDBACK_FOLDER = /(^|\/)feedback\/[^/]+\/?$/;

  function openFeedback(app, folder) {
    return app.serviceManager.contents.get(folder, { content: true }).then(function (listing) {
      const pages = (listing.content || []).filter(function (item) {
        return item.type === "file" && /\.html$/.test(item.name);
      });
      return Promise.all(
        pages.map(function (page) {
          return app.commands.execute("docmanager:open", { path: page.path, factory: "HTML Viewer" });
        })
      );
    });
  }

  const plugin = {
    id: "attention-course-feedback:open-page",
    description: "Opens the feedback page when a student clicks (view feedback) in the Assignment List.",
    autoStart: true,
    activate: function (app) {
      app.commands.commandExecuted.connect(function (_, executed) {
        const path = (executed.args && executed.args.path) || "";
        if (executed.id !== "filebrowser:go-to-path" || !FEEDBACK_FOLDER.test(path)) {
          return;
        }
        openFeedback(app, path.replace(/\/$/, "")).catch(function (error) {
          console.error("attention-course-feedback: could not open the feedback page of " + path, error);
        });
      });
    },
  };

  const containers = (window._JUPYTERLAB = window._JUPYTERLAB || {});
  containers["attention-course-feedback"] = {
    init: function () {
      return Promise.resolve();
    },
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("attention-course-feedback has no module " + module));
      }
      return Promise.resolve(function () {
        return { __esModule: true, default: plugin };
      });
    },
  };
})();
