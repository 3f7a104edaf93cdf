//! What a release ships, installed the ways a person installs it, with nothing of this machine's
//! setup: the archive through install.sh (from a folder and from a `file://` URL, as from the
//! release's), and the npm packages with the registry out of reach (`npx reasons`). Ignored:
//! they package the release build (`cargo test --release -- --ignored`, as `.ci/run` does).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::release::{build_archive, clean, host_target, script, succeeds, VERSION};
use crate::util::{reasons, root};

/// The paths of a tar archive, as `tar` lists them.
fn listing(archive: &Path) -> Vec<String> {
    let listed = succeeds(Command::new("tar").arg("-tzf").arg(archive));
    let mut names: Vec<String> = listed.lines().map(str::to_owned).collect();
    names.sort();
    names
}

/// The man pages checked in, by file name.
fn man_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("man"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".1"))
        .collect();
    pages.sort();
    assert!(pages.len() > 5, "{pages:?}");
    pages
}

#[test]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn release_archive_holds_binary_man_pages_completions_and_licenses() {
    let out = tempfile::tempdir().unwrap();
    let archive = build_archive(out.path());
    let top = format!("reasons-{VERSION}-{}", host_target());
    let mut expected: Vec<String> = [
        "",
        "reasons",
        "README.md",
        "CHANGELOG.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "man/",
        "completions/",
        "completions/reasons.bash",
        "completions/_reasons",
        "completions/reasons.fish",
    ]
    .iter()
    .map(|name| format!("{top}/{name}"))
    .collect();
    expected.extend(man_pages().iter().map(|page| format!("{top}/man/{page}")));
    expected.sort();
    assert_eq!(listing(&archive), expected);

    // SHA256SUMS is what `sha256sum --check` reads, and it holds.
    let sums = std::fs::read_to_string(out.path().join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 1, "{sums}");
    assert!(sums.ends_with(&format!("  {top}.tar.gz\n")), "{sums}");
    succeeds(
        Command::new("sha256sum")
            .args(["--check", "--strict", "SHA256SUMS"])
            .current_dir(out.path()),
    );

    // The same commit makes the same bytes.
    let first = std::fs::read(&archive).unwrap();
    build_archive(out.path());
    assert!(
        std::fs::read(&archive).unwrap() == first,
        "dist/build is not reproducible"
    );
}

#[test]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn installer_puts_binary_man_pages_and_completions_in_a_clean_home() {
    let out = tempfile::tempdir().unwrap();
    build_archive(out.path());
    let home = tempfile::tempdir().unwrap();
    let home = home.path();

    // The installer as it comes with a release (its version written in), the archives from a
    // folder.
    let said = succeeds(
        clean("sh", home)
            .arg(out.path().join("install.sh"))
            .env("REASONS_INSTALL_FROM", out.path()),
    );
    assert_eq!(said, "");

    let bin = home.join(".local/bin/reasons");
    let version = succeeds(clean(&bin, home).arg("--version"));
    assert_eq!(version, format!("reasons {VERSION}\n"));

    // The installed program reads a sample as the one under test does.
    let extracted = succeeds(
        clean(&bin, home)
            .args(["extract", "samples/claude-code.jsonl"])
            .current_dir(root()),
    );
    let expected = succeeds(reasons().args(["extract", "samples/claude-code.jsonl"]));
    assert!(extracted.lines().count() > 3, "{extracted}");
    assert_eq!(extracted, expected);

    // The man pages where `man` looks beside ~/.local/bin, byte for byte the checked-in ones.
    for page in man_pages() {
        let installed = home.join(".local/share/man/man1").join(&page);
        assert_eq!(
            std::fs::read(&installed).unwrap_or_default(),
            std::fs::read(root().join("man").join(&page)).unwrap(),
            "{}",
            installed.display()
        );
    }

    // `man` finds them from the PATH, as a person with ~/.local/bin on it runs it.
    let path = format!("{}:/usr/bin:/bin", home.join(".local/bin").display());
    let found = succeeds(
        clean("man", home)
            .args(["-w", "reasons-extract"])
            .env("PATH", path),
    );
    assert_eq!(
        found.trim_end(),
        home.join(".local/share/man/man1/reasons-extract.1")
            .display()
            .to_string()
    );

    // Each shell's completions where it looks for a person's own, made by this binary.
    for (shell, place) in [
        ("bash", ".local/share/bash-completion/completions/reasons"),
        ("zsh", ".local/share/zsh/site-functions/_reasons"),
        ("fish", ".config/fish/completions/reasons.fish"),
    ] {
        let installed = std::fs::read_to_string(home.join(place)).unwrap_or_default();
        let made = succeeds(reasons().args(["completions", shell]));
        assert!(!made.is_empty());
        assert_eq!(installed, made, "{place}");
    }
    // bash-completion's loader sources that file for `reasons`: it defines the completion.
    let completion = succeeds(clean("bash", home).args([
        "--norc",
        "-c",
        "source ~/.local/share/bash-completion/completions/reasons && complete -p reasons",
    ]));
    assert!(completion.contains("reasons"), "{completion}");
}

#[test]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn installer_downloads_by_url_installs_under_a_prefix_and_refuses_a_bad_checksum() {
    let out = tempfile::tempdir().unwrap();
    let archive = build_archive(out.path());
    let home = tempfile::tempdir().unwrap();
    let prefix = home.path().join("opt/reasons");

    // The repository's installer, told the version, downloading from a URL base (curl reads
    // `file://` as it reads the release's https): `--to PREFIX/bin` puts the rest in PREFIX/share.
    let url = format!("file://{}", out.path().display());
    succeeds(
        clean("sh", home.path())
            .arg(root().join("dist/install.sh"))
            .args(["--version", VERSION, "--from", &url, "--to"])
            .arg(prefix.join("bin")),
    );
    let version = succeeds(clean(prefix.join("bin/reasons"), home.path()).arg("--version"));
    assert_eq!(version, format!("reasons {VERSION}\n"));
    for place in [
        "share/man/man1/reasons-extract.1",
        "share/bash-completion/completions/reasons",
        "share/zsh/site-functions/_reasons",
        "share/fish/vendor_completions.d/reasons.fish",
    ] {
        assert!(prefix.join(place).is_file(), "no {place}");
    }
    assert!(!home.path().join(".local").exists());

    // One byte changed in the archive: nothing is installed, and the checksum is why.
    let mut bytes = std::fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let other_home = tempfile::tempdir().unwrap();
    let refused = clean("sh", other_home.path())
        .arg(out.path().join("install.sh"))
        .env("REASONS_INSTALL_FROM", out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("SHA256SUMS says") && stderr.contains("not installed"),
        "{stderr}"
    );
    assert!(!other_home.path().join(".local").exists());
}

/// npm's words for this machine (`process.platform`, `process.arch`).
fn npm_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{cpu}")
}

/// The package.json inside an npm tarball.
fn package_json(tarball: &Path) -> serde_json::Value {
    let json = succeeds(
        Command::new("tar")
            .arg("-xzOf")
            .arg(tarball)
            .arg("package/package.json"),
    );
    serde_json::from_str(&json).unwrap()
}

/// npm or npx with a clean HOME, an empty cache of its own and the registry out of reach: what
/// it installs comes from the tarballs given, or not at all.
fn offline(program: &str, home: &Path, cache: &Path) -> Command {
    let mut command = clean(program, home);
    command
        .env("npm_config_registry", "http://127.0.0.1:9")
        .env("npm_config_offline", "true")
        .env("npm_config_cache", cache)
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false");
    command
}

#[test]
#[cfg(target_os = "linux")]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn npx_reasons_runs_the_platform_package_installed_offline() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    build_archive(&work.join("dist"));
    let npm_out = work.join("npm");
    script(
        "dist/npm/build",
        &[
            "--from",
            work.join("dist").to_str().unwrap(),
            "--out",
            npm_out.to_str().unwrap(),
        ],
    );

    // The package people install: a launcher, every platform as an optional dependency, and
    // nothing that runs at install time.
    let main = npm_out.join(format!("reasons-{VERSION}.tgz"));
    let manifest = package_json(&main);
    assert_eq!(manifest["name"], "reasons");
    assert_eq!(manifest["bin"]["reasons"], "bin/reasons");
    assert!(manifest.get("scripts").is_none(), "{manifest}");
    let optional = manifest["optionalDependencies"].as_object().unwrap();
    let mut platforms: Vec<&str> = optional.keys().map(String::as_str).collect();
    platforms.sort();
    assert_eq!(
        platforms,
        [
            "reasons-darwin-arm64",
            "reasons-darwin-x64",
            "reasons-linux-arm64",
            "reasons-linux-x64"
        ]
    );
    assert!(
        optional.values().all(|version| version == VERSION),
        "{manifest}"
    );

    // This machine's platform package: its binary, limited to this os and cpu.
    let platform = format!("reasons-{}", npm_platform());
    let native = npm_out.join(format!("{platform}-{VERSION}.tgz"));
    let native_manifest = package_json(&native);
    let (os, cpu) = npm_platform()
        .split_once('-')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .unwrap();
    assert_eq!(native_manifest["os"], serde_json::json!([os]));
    assert_eq!(native_manifest["cpu"], serde_json::json!([cpu]));
    assert!(
        native_manifest.get("scripts").is_none(),
        "{native_manifest}"
    );
    let packed = listing(&native);
    assert!(
        packed.contains(&"package/bin/reasons".to_owned()),
        "{packed:?}"
    );

    let home = work.join("home");
    let cache = work.join("cache");
    let prefix = work.join("prefix");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&prefix).unwrap();
    succeeds(
        offline("npm", &home, &cache)
            .args(["install", "--prefix"])
            .arg(&prefix)
            .arg(&main)
            .arg(&native),
    );

    let npx = |args: &[&str]| {
        let mut command = offline("npx", &home, &cache);
        command.arg("reasons").args(args).current_dir(&prefix);
        command
    };
    assert_eq!(
        succeeds(&mut npx(&["--version"])),
        format!("reasons {VERSION}\n")
    );
    let help = succeeds(&mut npx(&["run", "claude", "--help"]));
    assert_eq!(help, succeeds(reasons().args(["run", "claude", "--help"])));

    // The binary's exit status, its output and its arguments pass through as they are.
    let missing = npx(&["extract", "no such file.jsonl"]).output().unwrap();
    let direct = reasons()
        .args(["extract", "no such file.jsonl"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), direct.status.code());
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        String::from_utf8_lossy(&direct.stderr)
    );

    // SIGTERM to the launcher alone (a runner's timeout) ends the binary too, and the launcher
    // ends as the binary did.
    let launcher = prefix.join("node_modules/.bin/reasons");
    let mut filter = clean(&launcher, &home)
        .arg("filter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = filter.id();
    let mut stdin = filter.stdin.take().unwrap();
    let lines = crate::util::lines_of(filter.stdout.take().unwrap());
    std::io::Write::write_all(&mut stdin, b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n").unwrap();
    let echoed = lines
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("a line back");
    assert_eq!(echoed, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let binary: u32 = children
        .split_whitespace()
        .next()
        .expect("the binary runs")
        .parse()
        .unwrap();
    succeeds(Command::new("kill").args(["-TERM", &pid.to_string()]));
    let status = filter.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "{status}");
    let left = std::fs::read_to_string(format!("/proc/{binary}/stat")).unwrap_or_default();
    assert!(
        left.is_empty() || left.contains(") Z "),
        "the binary still runs: {left}"
    );
    drop(stdin);
}
