// "(view feedback)" in nbgrader's Assignment List runs `filebrowser:go-to-path` on the feedback folder
// (<lesson>/feedback/<timestamp>), which only moves the file browser. This plugin watches for that command and opens
// the feedback page in a browser tab of its own, served by the student's server as the static page it is (its maths
// is MathML; its links to each question work there, and not inside JupyterLab's sandboxed HTML viewer).
//
// A JupyterLab federated extension written by hand, without a build: it imports no shared module (it only uses the
// application object every plugin is given), so the container shares nothing and `get` returns the module at once.
(function () {
  "use strict";
  // nbgrader's fetched feedback: <lesson>/feedback/<timestamp of the submission>, e.g. "2026-12-02 14:01:52.733390 UTC"
  // (not the instructor's grading/feedback/<student>, which a folder link in the formgrader may open)
  const FEEDBACK_FOLDER = /(^|\/)feedback\/\d{4}-\d{2}-\d{2}[^/]*\/?$/;

  function filesUrl(path) {
    const config = JSON.parse(document.getElementById("jupyter-config-data").textContent);
    return config.baseUrl + "files/" + path.split("/").map(encodeURIComponent).join("/");
  }

  function openFeedback(app, folder) {
    // The tab is opened now, while the click still counts as the student's (a browser blocks a later pop-up),
    // and pointed at the page once the folder is listed.
    const tab = window.open("about:blank", "_blank");
    return app.serviceManager.contents.get(folder, { content: true }).then(function (listing) {
      const page = (listing.content || []).find(function (item) {
        return item.type === "file" && /\.html$/.test(item.name);
      });
      if (!page) {
        return tab && tab.close();
      }
      if (!tab) {  // pop-ups blocked: the page in JupyterLab's HTML viewer instead
        return app.commands.execute("docmanager:open", { path: page.path, factory: "HTML Viewer" });
      }
      tab.location.href = filesUrl(page.path);
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
