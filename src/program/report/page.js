// Filters for the page `reasons report` writes. It only shows and hides what the page already
// holds: it never writes markup, and reads the log's text only to search it.
(function () {
  "use strict";
  var root = document.documentElement;
  var problems = [];
  function problem(text) {
    problems.push(text);
    root.setAttribute("data-problems", problems.join(" | "));
  }
  window.addEventListener("error", function (event) { problem("error: " + event.message); });
  document.addEventListener("securitypolicyviolation", function (event) {
    problem("blocked by the page's policy: " + event.violatedDirective);
  });

  var form = document.getElementById("filters");
  var calls = Array.prototype.slice.call(document.querySelectorAll("li.call"));
  var sessions = Array.prototype.slice.call(document.querySelectorAll("details.session"));
  var sessionIndex = new Map();
  sessions.forEach(function (session, at) { sessionIndex.set(session, at); });
  var sessionOf = calls.map(function (call) { return sessionIndex.get(call.closest("details.session")); });
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=status]"));
  var tool = form.querySelector("select[name=tool]");
  var search = form.querySelector("input[name=q]");
  var shown = document.getElementById("shown");
  // Each call's text, lower-cased, taken the first time something is searched for.
  var texts = null;

  // The filters in the address: ?status=missing&status=blank&tool=Bash&q=rm, so a filtered view
  // can be linked to and reloaded.
  function readAddress() {
    var params = new URLSearchParams(window.location.search);
    var statuses = [];
    params.getAll("status").forEach(function (value) { statuses = statuses.concat(value.split(",")); });
    if (statuses.length > 0) {
      boxes.forEach(function (box) { box.checked = statuses.indexOf(box.value) >= 0; });
    }
    if (params.has("tool")) {
      var wanted = params.get("tool");
      tool.value = Array.prototype.some.call(tool.options, function (o) { return o.value === wanted; }) ? wanted : "";
    }
    if (params.has("q")) { search.value = params.get("q"); }
  }

  function writeAddress(statuses) {
    var params = new URLSearchParams();
    if (statuses.length < boxes.length) { params.set("status", statuses.join(",")); }
    if (tool.value) { params.set("tool", tool.value); }
    if (search.value.trim()) { params.set("q", search.value.trim()); }
    var query = params.toString();
    try {
      window.history.replaceState(null, "", (query ? "?" + query : window.location.pathname) + window.location.hash);
    } catch (ignored) {
      // Some browsers refuse to change the address of a page opened from a file; the filters
      // still work, only the address does not follow them.
    }
  }

  function apply(updateAddress) {
    var statuses = boxes.filter(function (box) { return box.checked; }).map(function (box) { return box.value; });
    var wantedTool = tool.value;
    var needle = search.value.trim().toLowerCase();
    if (needle && texts === null) {
      texts = calls.map(function (call) { return call.textContent.toLowerCase(); });
    }
    var visible = 0;
    var perSession = sessions.map(function () { return 0; });
    calls.forEach(function (call, at) {
      var keep = statuses.indexOf(call.getAttribute("data-status")) >= 0 &&
        (!wantedTool || call.getAttribute("data-tool") === wantedTool) &&
        (!needle || texts[at].indexOf(needle) >= 0);
      if (call.hidden === keep) { call.hidden = !keep; }
      if (keep) {
        visible += 1;
        perSession[sessionOf[at]] += 1;
      }
    });
    sessions.forEach(function (session, at) { session.hidden = perSession[at] === 0; });
    shown.textContent = visible + " of " + calls.length + " calls";
    root.setAttribute("data-shown", String(visible));
    if (updateAddress) { writeAddress(statuses); }
  }

  var typing = null;
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("change", function () { apply(true); });
  search.addEventListener("input", function () {
    window.clearTimeout(typing);
    typing = window.setTimeout(function () { apply(true); }, 150);
  });
  readAddress();
  form.hidden = false;
  apply(false);
  root.setAttribute("data-ready", String(calls.length));
})();
