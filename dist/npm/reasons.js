#!/usr/bin/env node
// `npx reasons`: runs the native reasons binary of the platform package npm installed beside
// this one (reasons-linux-x64, reasons-darwin-arm64, …: the optionalDependencies, each limited
// to its os and cpu, so npm installs only the one this machine runs). Nothing is downloaded
// here and nothing runs at install time.
"use strict";

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");

const platformPackage = `reasons-${process.platform}-${process.arch}`;
const { optionalDependencies, version } = require("../package.json");

function fail(message) {
  process.stderr.write(`reasons: ${message}\n`);
  process.exit(2);
}

let binary;
try {
  binary = require.resolve(`${platformPackage}/bin/reasons`);
} catch {
  if (!(platformPackage in optionalDependencies)) {
    fail(
      `no prebuilt reasons ${version} for ${process.platform} ${process.arch}; ` +
        "build it with a Rust toolchain: cargo install reasons",
    );
  }
  fail(
    `${platformPackage}, which carries the binary, is not installed beside ` +
      `${path.dirname(__dirname)}: npm leaves an optional dependency out when told to ` +
      "(--omit=optional) or when it cannot fetch it; " +
      `install reasons@${version} again with the registry in reach`,
  );
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// Like `reasons run` with its agent: Ctrl-C and Ctrl-\ reach the binary from the terminal, as
// they reach every process of the foreground group, so they are only kept from ending this
// launcher before it; SIGTERM and SIGHUP, sent to this process alone (a CI runner's timeout, a
// closed window), are passed on.
const passedOn = { SIGTERM: true, SIGHUP: true, SIGINT: false, SIGQUIT: false };
for (const [signal, passOn] of Object.entries(passedOn)) {
  process.on(signal, () => {
    if (passOn) child.kill(signal);
  });
}

child.on("error", (error) => fail(`could not run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Ended by a signal: end the same way, so the shell sees what the binary's end was.
    // A signal this process ignores (node ignores SIGPIPE) leaves the shell's convention.
    for (const name of Object.keys(passedOn)) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + os.constants.signals[signal]), 100);
    return;
  }
  process.exit(code);
});
