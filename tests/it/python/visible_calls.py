"""What a person sees on a page `reasons report` wrote: Debian's chromium, driven by playwright.

usage: visible_calls.py < PLAN.json

The plan names the page and the views to open: each at a viewport size, with an address
(`?status=missing#call-3`), then actions a person takes (untick a status, pick a tool, type in the
search box, follow a call's link), and optionally a screenshot. For each view it prints, as one
JSON array, what is on screen once the page's script has run: the ids of the calls that have a
box to see (not merely the ones without a `hidden` attribute), how many sessions do, the
counter's text, the address, and where the call the address points at stands against the
viewport and the sticky filter bar.

The browser is the system's chromium (playwright never fetches one here), headless, in a fresh
profile, with the background connections a closed network refuses turned off.
"""

import json
import sys
import tempfile

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
]

# Runs in the page: what has a box on screen.
MEASURE = """
(targetId) => {
  const seen = (element) => {
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return box.width > 0 && box.height > 0 && style.display !== "none" && style.visibility !== "hidden";
  };
  const calls = Array.from(document.querySelectorAll("li.call"));
  const filters = document.getElementById("filters");
  const result = {
    visible: calls.filter(seen).map((call) => call.id),
    hidden_but_shown: calls.filter((call) => call.hidden && seen(call)).map((call) => call.id),
    sessions: Array.from(document.querySelectorAll("details.session")).filter(seen).length,
    shown: document.getElementById("shown").textContent,
    search: window.location.search,
    hash: window.location.hash,
    viewport: [window.innerWidth, window.innerHeight],
    filters_bottom: filters && seen(filters) ? filters.getBoundingClientRect().bottom : null,
    problems: document.documentElement.getAttribute("data-problems"),
  };
  if (targetId) {
    const target = document.getElementById(targetId);
    const box = target.getBoundingClientRect();
    result.target = { id: targetId, top: box.top, bottom: box.bottom, seen: seen(target) };
  }
  return result;
}
"""


def wait_until(page, condition):
    """Waits for `condition` (a function in the page) to hold, for ten seconds at most. Asked
    through `evaluate`, which the page's Content-Security-Policy allows, where
    `wait_for_function` compiles a string in the page and is refused."""
    for _ in range(200):
        if page.evaluate(condition):
            return
        page.wait_for_timeout(50)
    raise SystemExit(f"{page.url}: never true: {condition}")


def ready(page):
    wait_until(page, "() => document.documentElement.hasAttribute('data-ready')")


def act(page, action):
    kind, value = action
    if kind == "uncheck":
        page.uncheck(f"#filters input[name=status][value='{value}']")
    elif kind == "check":
        page.check(f"#filters input[name=status][value='{value}']")
    elif kind == "select":
        page.select_option("#filters select[name=tool]", value)
    elif kind == "type":
        # The search waits for the typing to pause; its run marks the root again.
        page.evaluate("document.documentElement.removeAttribute('data-shown')")
        page.fill("#filters input[name=q]", value)
        wait_until(page, "() => document.documentElement.hasAttribute('data-shown')")
    elif kind == "follow":
        page.click(f"#{value} a.anchor")
        wait_until(page, f"() => window.location.hash === '#{value}'")
    else:
        raise SystemExit(f"unknown action {kind}")


def main():
    plan = json.load(sys.stdin)
    results = []
    messages = []
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS
        )
        for view in plan["views"]:
            page = context.new_page()
            page.on("console", lambda message: messages.append(message.text))
            page.on("pageerror", lambda error: messages.append(str(error)))
            page.set_viewport_size({"width": view["width"], "height": view["height"]})
            page.goto(plan["page"] + view.get("address", ""))
            ready(page)
            for action in view.get("actions", []):
                act(page, action)
            # Let a scroll to the address's call settle before it is measured.
            page.wait_for_timeout(100)
            measured = page.evaluate(MEASURE, view.get("target"))
            measured["name"] = view["name"]
            if view.get("screenshot"):
                page.screenshot(path=view["screenshot"])
            results.append(measured)
            page.close()
        context.close()
    print(json.dumps({"views": results, "console": messages}))


if __name__ == "__main__":
    main()
