"""OpenClaw's own Control UI (the page its gateway serves) as a person follows a run there:
Debian's chromium, driven by playwright.

usage: openclaw_control_ui.py < PLAN.json

The plan: `url`, the chat's address; `message`, what the person types; `command`, the shell
command the call the model makes runs; `answer`, the model's text once the call ended;
`approve`, whether OpenClaw asks before it runs (exec approvals on), and then `removes`, a path
the command removes; `screenshot`, where to keep a picture of what the person sees.

Sends the message, waits for the call's row, opens its card as a person clicks it. Where OpenClaw
asks, reads its approval box while it waits, then allows the call once and waits for the call
to end. Prints one JSON object: `row`, the call's row before it is opened; `card`, the opened
card while the person decides (or once the call ended, where nothing is asked); `approval`, the
approval box's text, or null; `approvals`, how many approval boxes were shown at once;
`ran_before_allowed`, whether `removes` was gone while OpenClaw asked; `approvals_after`, how
many approval boxes were shown once the model's answer was.

The selectors are the Control UI's own class names at the version `.ci/real-parts` installs.
"""

import json
import os
import sys
import tempfile

from playwright.sync_api import sync_playwright

from visible_calls import ARGS, CHROMIUM

# How long the model's turn and OpenClaw's own work may take, in milliseconds.
PATIENCE = 120_000


def main():
    plan = json.load(sys.stdin)
    result = {"approval": None, "approvals": 0, "approvals_after": 0}
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        page = context.new_page()
        page.set_default_timeout(PATIENCE)
        page.goto(plan["url"], wait_until="load")
        page.get_by_label("Chat composer").click()
        page.keyboard.type(plan["message"])
        page.keyboard.press("Enter")

        row = page.locator("button.chat-tool-row").filter(has_text=plan["command"]).last
        row.wait_for(state="visible")
        result["row"] = row.inner_text()
        card = page.locator(".chat-tool-msg-collapse").filter(has=row).last
        approvals = page.locator(".exec-approval-card")
        if plan["approve"]:
            approvals.first.wait_for(state="visible")
            result["approvals"] = approvals.count()
            result["approval"] = approvals.first.inner_text()
            result["ran_before_allowed"] = not os.path.exists(plan["removes"])
        row.click()
        card.get_by_text("reason:", exact=True).wait_for(state="visible", timeout=10_000)
        if not plan["approve"]:
            card.get_by_text("Completed", exact=True).wait_for(state="visible")
        result["card"] = card.inner_text()
        page.screenshot(path=plan["screenshot"])

        if plan["approve"]:
            approvals.first.get_by_role("button", name="Allow once").click()
        page.get_by_text(plan["answer"], exact=True).last.wait_for(state="visible")
        result["approvals_after"] = approvals.count()
        print(json.dumps(result))
        context.close()


if __name__ == "__main__":
    main()
