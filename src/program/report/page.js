// The script of the page `reasons report` writes: its filters, and on a page of many calls the
// drawing of the calls near the screen. It never makes markup of a log's text: the rows it draws
// are the page's own, written and escaped by `reasons` and packed in the page (deflated, in
// base64, `li.packed`); the log's text it reads only to search it.
(function () {
  "use strict";
  var root = document.documentElement;
  var problems = [];
  function problem(text) {
    problems.push(text);
    root.setAttribute("data-problems", problems.join(" | "));
  }
  window.addEventListener("error", function (event) { problem("error: " + event.message); });
  window.addEventListener("unhandledrejection", function (event) { problem("error: " + event.reason); });
  document.addEventListener("securitypolicyviolation", function (event) {
    problem("blocked by the page's policy: " + event.violatedDirective);
  });

  function all(selector, within) {
    return Array.prototype.slice.call((within || document).querySelectorAll(selector));
  }

  var form = document.getElementById("filters");
  var sessions = all("details.session");
  var sessionIndex = new Map();
  sessions.forEach(function (session, at) { sessionIndex.set(session, at); });
  var boxes = all("input[name=status]", form);
  var tool = form.querySelector("select[name=tool]");
  var search = form.querySelector("input[name=q]");
  var shown = document.getElementById("shown");
  var runs = all("li.packed");
  var calls = runs.length > 0 ? packedCalls(runs) : drawnCalls();

  // Shows or hides each session by how many of its calls the filters keep.
  function showSessions(perSession) {
    sessions.forEach(function (session, at) { session.hidden = perSession[at] === 0; });
  }

  // A page of few calls: every call is drawn, and the filters hide and show them.
  function drawnCalls() {
    var items = all("li.call");
    var sessionOf = items.map(function (call) { return sessionIndex.get(call.closest("details.session")); });
    // Each call's text, lower-cased, taken the first time something is searched for.
    var texts = null;
    return {
      total: items.length,
      filter: function (keep, needle) {
        if (needle && texts === null) {
          texts = items.map(function (call) { return call.textContent.toLowerCase(); });
        }
        var visible = 0;
        var perSession = sessions.map(function () { return 0; });
        items.forEach(function (call, at) {
          var kept = keep(call.getAttribute("data-status"), call.getAttribute("data-tool")) &&
            (!needle || texts[at].indexOf(needle) >= 0);
          if (call.hidden === kept) { call.hidden = !kept; }
          if (kept) {
            visible += 1;
            perSession[sessionOf[at]] += 1;
          }
        });
        showSessions(perSession);
        return Promise.resolve(visible);
      },
      // The browser brings a drawn call on screen by itself.
      reveal: function () { return Promise.resolve(); },
    };
  }

  // A page of many calls: each run of calls stays packed until it comes near the screen, is
  // drawn then, and packed again once far from it, so the page never holds more than a few
  // runs' rows. What the filters keep is worked out from each call's status and tool, which the
  // run carries unpacked; a packed run stands as tall as its kept calls would.
  function packedCalls(packed) {
    var statusNames = boxes.map(function (box) { return box.value; });
    var toolNames = Array.prototype.slice.call(tool.options, 1).map(function (option) { return option.value; });
    var rowHeight = 120;
    var filtering = 0;
    var total = 0;
    var runOf = new Map();
    var runs = packed.map(function (element) {
      var codes = element.getAttribute("data-calls").split(",").map(Number);
      var run = {
        element: element,
        first: Number(element.getAttribute("data-first")),
        statuses: codes.map(function (code) { return statusNames[code % statusNames.length]; }),
        tools: codes.map(function (code) { return toolNames[Math.floor(code / statusNames.length)]; }),
        kept: new Uint8Array(codes.length),
        count: codes.length,
        session: sessionIndex.get(element.closest("details.session")),
        rows: null,
        drawing: null,
        texts: null,
      };
      total += codes.length;
      runOf.set(element, run);
      return run;
    });

    function inflate(run) {
      var binary = atob(run.element.querySelector("script").textContent);
      var bytes = new Uint8Array(binary.length);
      for (var at = 0; at < binary.length; at += 1) { bytes[at] = binary.charCodeAt(at); }
      var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
      return new Response(inflated).text();
    }

    // The rows' markup is the page's own, every text in it escaped by `reasons`: it is parsed
    // as the rest of the page was.
    function draw(run) {
      if (run.rows) { return Promise.resolve(); }
      if (!run.drawing) {
        run.drawing = inflate(run).then(function (markup) {
          var rows = document.createElement("ol");
          rows.className = "calls";
          rows.innerHTML = markup;
          run.rows = rows;
          run.drawing = null;
          showKept(run);
          run.element.style.height = "";
          run.element.appendChild(rows);
          if (run.count > 0) { rowHeight = run.element.offsetHeight / run.count; }
        });
      }
      return run.drawing;
    }

    function pack(run) {
      if (!run.rows) { return; }
      if (run.count > 0) { rowHeight = run.element.offsetHeight / run.count; }
      run.element.removeChild(run.rows);
      run.rows = null;
      showKept(run);
    }

    function showKept(run) {
      if (run.rows) {
        Array.prototype.forEach.call(run.rows.children, function (call, at) {
          var kept = run.kept[at] === 1;
          if (call.hidden === kept) { call.hidden = !kept; }
        });
      } else {
        run.element.style.height = Math.round(run.count * rowHeight) + "px";
      }
    }

    // The four entities the page's escaping writes (`Text` in report/mod.rs).
    var ENTITIES = { lt: "<", gt: ">", quot: "\"", amp: "&" };

    // Each call's text, as `textContent` would give it, lower-cased.
    function textsOf(run) {
      if (run.texts) { return Promise.resolve(); }
      return inflate(run).then(function (markup) {
        run.texts = markup.split("<li class=\"call ").slice(1).map(function (row) {
          return row.replace(/<[^>]*>/g, "").replace(/&(lt|gt|quot|amp);/g, function (entity, name) {
            return ENTITIES[name];
          }).toLowerCase();
        });
      });
    }

    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        var run = runOf.get(entry.target);
        if (entry.isIntersecting) { draw(run); } else { pack(run); }
      });
    }, { rootMargin: "1500px 0px" });
    runs.forEach(function (run) { observer.observe(run.element); });

    return {
      total: total,
      filter: function (keep, needle) {
        var generation = (filtering += 1);
        var ready = needle ? runs.reduce(function (before, run) {
          return before.then(function () { return textsOf(run); });
        }, Promise.resolve()) : Promise.resolve();
        function count() {
          var visible = 0;
          var perSession = sessions.map(function () { return 0; });
          runs.forEach(function (run) {
            run.count = 0;
            for (var at = 0; at < run.kept.length; at += 1) {
              var kept = keep(run.statuses[at], run.tools[at]) &&
                (!needle || run.texts[at].indexOf(needle) >= 0);
              run.kept[at] = kept ? 1 : 0;
              if (kept) { run.count += 1; }
            }
            run.element.hidden = run.count === 0;
            showKept(run);
            visible += run.count;
            perSession[run.session] += run.count;
          });
          showSessions(perSession);
          return visible;
        }
        if (!needle) { return Promise.resolve(count()); }
        return ready.then(function () {
          // A filter set since this one began has the last word.
          return generation === filtering ? count() : null;
        });
      },
      // Draws the run of the call `id` names and brings the call on screen.
      reveal: function (id) {
        var number = /^call-([0-9]+)$/.exec(id);
        var run = number && runs.find(function (run) {
          return Number(number[1]) >= run.first && Number(number[1]) < run.first + run.kept.length;
        });
        if (!run) { return Promise.resolve(); }
        return draw(run).then(function () {
          var call = document.getElementById(id);
          all("li.call.target").forEach(function (other) { other.classList.remove("target"); });
          call.classList.add("target");
          call.scrollIntoView();
          // Runs drawn around it as it came on screen may have moved it: once more, after.
          return new Promise(function (done) {
            window.requestAnimationFrame(function () {
              window.requestAnimationFrame(function () { call.scrollIntoView(); done(); });
            });
          });
        });
      },
    };
  }

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
    if (updateAddress) { writeAddress(statuses); }
    if (needle) { shown.textContent = "searching…"; }
    return calls.filter(function (status, name) {
      return statuses.indexOf(status) >= 0 && (!wantedTool || name === wantedTool);
    }, needle).then(function (visible) {
      if (visible === null) { return; }
      shown.textContent = visible + " of " + calls.total + " calls";
      root.setAttribute("data-shown", String(visible));
    });
  }

  function revealAddressed() {
    return calls.reveal(decodeURIComponent(window.location.hash.slice(1)));
  }

  var typing = null;
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("change", function () { apply(true); });
  search.addEventListener("input", function () {
    window.clearTimeout(typing);
    typing = window.setTimeout(function () { apply(true); }, 150);
  });
  window.addEventListener("hashchange", revealAddressed);
  readAddress();
  form.hidden = false;
  apply(false).then(revealAddressed).then(function () {
    root.setAttribute("data-ready", String(calls.total));
  });
})();
