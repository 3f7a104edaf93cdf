"""A page of many calls (`reasons report` packs their rows) opened as a person would open it:
Debian's chromium, driven by playwright.

usage: packed_page.py < PLAN.json

The plan names the page, a call deep in it, a filtered address and a screenshot's path. Prints
one JSON object: how long the page took to its load event and to its script's `data-ready`;
whether the deep call came on screen by its link and by scrolling to it; what the filters
left, from the address and from ticking and picking as a person does; how many rows were drawn
at most (the page draws only those near the screen); every request the page made other than its
own file; and every console message.
"""

import json
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

from visible_calls import ARGS, CHROMIUM, wait_until

# Where a call stands against the viewport and the sticky filter bar.
PLACE = """
(id) => {
  const call = document.getElementById(id);
  const filters = document.getElementById("filters");
  if (!call) { return null; }
  const box = call.getBoundingClientRect();
  return {
    top: box.top, bottom: box.bottom, height: box.height, viewport: window.innerHeight,
    filters_bottom: filters.getBoundingClientRect().bottom,
  };
}
"""

# How many rows are drawn, and whether one is on screen.
DRAWN = """
() => {
  const calls = Array.from(document.querySelectorAll("li.call"));
  const onScreen = calls.filter((call) => {
    const box = call.getBoundingClientRect();
    return !call.hidden && box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
  });
  return { drawn: calls.length, on_screen: onScreen.map((call) => call.id) };
}
"""


def ready(page):
    wait_until(page, "() => document.documentElement.hasAttribute('data-ready')")


def attribute(page, name):
    return page.evaluate(f"() => document.documentElement.getAttribute('{name}')")


def main():
    plan = json.load(sys.stdin)
    url = plan["page"]
    deep = plan["deep"]
    result = {"console": [], "requests": [], "most_drawn": 0}

    def note_drawn(page):
        drawn = page.evaluate(DRAWN)
        result["most_drawn"] = max(result["most_drawn"], drawn["drawn"])
        return drawn

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1400, "height": 900},
        )

        def request(request):
            # The page's own file, under any address; anything else left the page.
            if request.url.split("?")[0].split("#")[0] != url:
                result["requests"].append(request.url)

        context.on("request", request)

        def open_page(address):
            page = context.new_page()
            page.on("console", lambda message: result["console"].append(message.text))
            page.on("pageerror", lambda error: result["console"].append(str(error)))
            started = time.monotonic()
            page.goto(url + address, wait_until="load", timeout=300_000)
            loaded = time.monotonic() - started
            ready(page)
            return page, loaded, time.monotonic() - started

        # Opened, as a person opens it: the time to the load event, and to the script's mark.
        page, loaded, readied = open_page("")
        result["load_seconds"] = loaded
        result["ready_seconds"] = readied
        result["ready"] = attribute(page, "data-ready")
        result["shown"] = attribute(page, "data-shown")
        result["top"] = note_drawn(page)
        if plan.get("screenshot"):
            page.screenshot(path=plan["screenshot"])

        # Scrolled by the wheel, a screen at a time: there is always a call on screen.
        blank = []
        for step in range(12):
            page.mouse.wheel(0, 2500)
            page.wait_for_timeout(120)
            if not note_drawn(page)["on_screen"]:
                blank.append(step)
        result["wheel_blank_steps"] = blank

        # Scrolled down to the deep call's run, without its link: the run is drawn as it comes on
        # screen, and the call with it.
        number = int(deep.split("-")[1])
        page.evaluate(
            """(number) => {
              const runs = Array.from(document.querySelectorAll("li.packed"));
              const run = runs.filter((run) => Number(run.getAttribute("data-first")) <= number).pop();
              window.scrollTo(0, run.getBoundingClientRect().top + window.scrollY);
            }""",
            number,
        )
        wait_until(page, f"() => document.getElementById('{deep}') !== null")
        page.evaluate(f"() => document.getElementById('{deep}').scrollIntoView()")
        page.wait_for_timeout(100)
        result["scrolled_to"] = page.evaluate(PLACE, deep)
        note_drawn(page)

        # Scrolled to the end: the last call.
        page.keyboard.press("End")
        last = f"call-{result['ready']}"
        wait_until(page, f"() => document.getElementById('{last}') !== null")
        page.wait_for_timeout(300)
        page.keyboard.press("End")
        page.wait_for_timeout(300)
        result["end"] = page.evaluate(PLACE, last)
        note_drawn(page)
        page.close()

        # By its link, in a fresh page.
        page, _, _ = open_page("#" + deep)
        page.wait_for_timeout(150)
        result["linked"] = page.evaluate(PLACE, deep)
        result["linked_hash"] = page.evaluate("() => window.location.hash")
        if plan.get("deep_screenshot"):
            page.screenshot(path=plan["deep_screenshot"])
        note_drawn(page)

        # The filters, as a person sets them: untick "present", pick the tool.
        page.uncheck("#filters input[name=status][value='present']")
        wait_until(page, "() => document.documentElement.getAttribute('data-shown') !== null")
        result["without_present"] = attribute(page, "data-shown")
        page.select_option("#filters select[name=tool]", plan["tool"])
        page.wait_for_timeout(100)
        result["without_present_tool"] = attribute(page, "data-shown")
        result["after_filter"] = note_drawn(page)
        result["problems"] = attribute(page, "data-problems")
        page.close()

        # From the address.
        page, _, _ = open_page(plan["filtered"])
        result["filtered"] = attribute(page, "data-shown")
        page.evaluate("() => document.getElementById('sessions').scrollIntoView()")
        page.wait_for_timeout(300)
        result["filtered_drawn"] = note_drawn(page)
        page.close()
        context.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
