//! What a release ships, installed the ways a person installs it, with nothing of this machine's
//! setup: the archive through install.sh (from a folder and from a `file://` URL, as from the
//! release's), the npm packages with the registry out of reach (`npx reasons`), and the wheel
//! with the index out of reach (`pip install reasons`, `uvx reasons`). Ignored: they package the
//! release build (`cargo test --release -- --ignored`, as `.ci/run` does).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::real_parts::{part, UVX};
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

/// The wheel's platform tag for this machine: manylinux_2_N, N the newest glibc symbol version
/// the binary under test needs, as `objdump -T` lists them (what pip compares with the glibc it
/// runs on).
fn manylinux_tag() -> String {
    let symbols = succeeds(
        Command::new("objdump")
            .arg("-T")
            .arg(env!("CARGO_BIN_EXE_reasons")),
    );
    let newest = symbols
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|word| word.strip_prefix("GLIBC_2."))
        .filter_map(|minor| minor.split('.').next()?.parse::<u32>().ok())
        .max()
        .expect("the binary needs glibc");
    let arch = std::env::consts::ARCH;
    if newest <= 17 {
        format!("manylinux_2_17_{arch}.manylinux2014_{arch}")
    } else {
        format!("manylinux_2_{newest}_{arch}")
    }
}

/// The archive of the binary under test and, from it, this machine's wheel, by `dist/pip/build`
/// into `work/pip`; checks that the build names that one wheel and gives the path to it.
fn build_wheel(work: &Path) -> std::path::PathBuf {
    build_archive(&work.join("dist"));
    let out = work.join("pip");
    let said = script(
        "dist/pip/build",
        &[
            "--from",
            work.join("dist").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // For the glibc the binary needs: pip on an older one takes no wheel rather than this one.
    let wheel = out.join(format!(
        "reasons-{VERSION}-py3-none-{}.whl",
        manylinux_tag()
    ));
    assert_eq!(said, format!("{}\n", wheel.display()));
    wheel
}

/// Reads a wheel with Python's zipfile as an installer does, and checks that every entry's
/// SHA-256 and size are the ones RECORD lists and that RECORD lists every entry. Gives each
/// entry's name, Unix mode and date in the wheel's order, and the WHEEL and METADATA files.
fn wheel_contents(wheel: &Path) -> serde_json::Value {
    const CHECK: &str = r#"
import base64, csv, hashlib, io, json, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
record = next(name for name in wheel.namelist() if name.endswith(".dist-info/RECORD"))
rows = list(csv.reader(io.StringIO(wheel.read(record).decode())))
for name, digest, size in rows:
    if name == record:
        assert digest == size == "", rows
        continue
    content = wheel.read(name)
    expected = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    assert digest == "sha256=" + expected, name
    assert int(size) == len(content), name
assert sorted(row[0] for row in rows) == sorted(wheel.namelist()), rows
print(json.dumps({
    "entries": [[e.filename, oct(e.external_attr >> 16), e.date_time] for e in wheel.infolist()],
    "WHEEL": wheel.read(record.replace("RECORD", "WHEEL")).decode(),
    "METADATA": wheel.read(record.replace("RECORD", "METADATA")).decode(),
}))
"#;
    let checked = succeeds(Command::new("python3").args(["-c", CHECK]).arg(wheel));
    serde_json::from_str(&checked).unwrap()
}

#[test]
#[cfg(target_os = "linux")]
#[ignore = "packages the release build: cargo test --release -- --ignored"]
fn wheel_holds_the_binary_as_its_script_with_man_pages_completions_and_licenses() {
    let work = tempfile::tempdir().unwrap();
    let wheel = build_wheel(work.path());

    let data = format!("reasons-{VERSION}.data");
    let info = format!("reasons-{VERSION}.dist-info");
    let mut expected: Vec<String> = [
        "scripts/reasons",
        "data/share/bash-completion/completions/reasons",
        "data/share/zsh/site-functions/_reasons",
        "data/share/fish/vendor_completions.d/reasons.fish",
    ]
    .iter()
    .map(|name| format!("{data}/{name}"))
    .chain(
        man_pages()
            .iter()
            .map(|page| format!("{data}/data/share/man/man1/{page}")),
    )
    .chain(
        [
            "METADATA",
            "WHEEL",
            "RECORD",
            "licenses/LICENSE-MIT",
            "licenses/LICENSE-APACHE",
        ]
        .iter()
        .map(|name| format!("{info}/{name}")),
    )
    .collect();
    expected.sort_unstable();

    // RECORD holds; the binary is executable in the zip, nothing else is; one date for all; the
    // .dist-info last and RECORD at the very end, as installers expect.
    let contents = wheel_contents(&wheel);
    let entries = contents["entries"].as_array().unwrap();
    let order: Vec<&str> = entries.iter().map(|e| e[0].as_str().unwrap()).collect();
    let mut names = order.clone();
    names.sort_unstable();
    assert_eq!(names, expected);
    for entry in entries {
        let name = entry[0].as_str().unwrap();
        let mode = if name.ends_with("/scripts/reasons") {
            "0o100755"
        } else {
            "0o100644"
        };
        assert_eq!(entry[1], mode, "{name}");
        assert_eq!(entry[2], entries[0][2], "{name}");
    }
    assert!(order.last().unwrap().ends_with("/RECORD"), "{order:?}");
    let first_info = order.iter().position(|n| n.starts_with(&info)).unwrap();
    assert!(
        order[..first_info].iter().all(|n| n.starts_with(&data)),
        "{order:?}"
    );
    assert_eq!(
        contents["WHEEL"],
        format!(
            "Wheel-Version: 1.0\nGenerator: reasons dist/pip/build\nRoot-Is-Purelib: false\n\
             Tag: py3-none-{}\n",
            manylinux_tag()
        )
    );

    // The metadata PyPI shows: the README, its relative links made absolute, since it is read
    // away from the repository.
    let metadata = contents["METADATA"].as_str().unwrap();
    for field in [
        "Name: reasons\n".to_owned(),
        format!("Version: {VERSION}\n"),
        format!("Summary: {}\n", env!("CARGO_PKG_DESCRIPTION")),
        "License-Expression: MIT OR Apache-2.0\n".to_owned(),
        "License-File: LICENSE-APACHE\nLicense-File: LICENSE-MIT\n".to_owned(),
    ] {
        assert!(metadata.contains(&field), "{field}in\n{metadata}");
    }
    let (_, body) = metadata.split_once("\n\n").unwrap();
    assert!(body.starts_with("# reasons\n"), "{body}");
    assert!(body.contains("](https://"), "{body}");
    assert!(!body.contains("](doc/"), "{body}");

    // The same archive makes the same bytes.
    let first = std::fs::read(&wheel).unwrap();
    build_wheel(work.path());
    assert!(
        std::fs::read(&wheel).unwrap() == first,
        "dist/pip/build is not reproducible"
    );
}

#[test]
#[cfg(target_os = "linux")]
#[ignore = "needs the real parts: .ci/real-parts target/real-parts"]
fn pip_and_uvx_install_the_platform_wheel_offline() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let wheel = build_wheel(work);
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let hermes_help = succeeds(reasons().args(["run", "hermes", "--help"]));

    // pip in a fresh venv, the index out of reach and no cache: the wheel from the folder or
    // nothing.
    let venv = work.join("venv");
    succeeds(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let pip = |args: &[&str]| {
        let mut command = clean(venv.join("bin/pip"), &home);
        command
            .args(args)
            .env("PIP_INDEX_URL", "http://127.0.0.1:9")
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_NO_CACHE_DIR", "1")
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        command
    };
    let installed = succeeds(
        pip(&["install", "--no-index", "--find-links"])
            .arg(wheel.parent().unwrap())
            .arg("reasons"),
    );
    assert!(
        installed.contains(&format!("Successfully installed reasons-{VERSION}")),
        "{installed}"
    );

    // The binary itself where pip puts a package's programs, and the pages beside it.
    let bin = venv.join("bin/reasons");
    assert_eq!(
        succeeds(clean(&bin, &home).arg("--version")),
        format!("reasons {VERSION}\n")
    );
    assert_eq!(
        succeeds(clean(&bin, &home).args(["run", "hermes", "--help"])),
        hermes_help
    );
    for page in man_pages() {
        let installed = venv.join("share/man/man1").join(&page);
        assert_eq!(
            std::fs::read(&installed).unwrap_or_default(),
            std::fs::read(root().join("man").join(&page)).unwrap(),
            "{}",
            installed.display()
        );
    }

    // RECORD lists what pip put in place, so uninstalling takes all of it away.
    succeeds(&mut pip(&["uninstall", "--yes", "reasons"]));
    assert!(!bin.exists());
    assert!(!venv.join("share/man/man1/reasons.1").exists());

    // uvx from the wheel alone: offline, an empty cache, no index, no Python downloaded.
    let uvx = |args: &[&str]| {
        let mut command = clean(part(UVX), &home);
        command
            .args(["--offline", "--from"])
            .arg(&wheel)
            .arg("reasons")
            .args(args)
            .env("UV_CACHE_DIR", work.join("uv-cache"))
            .env("UV_INDEX_URL", "http://127.0.0.1:9")
            .env("UV_NO_CONFIG", "1")
            .env("UV_PYTHON_DOWNLOADS", "never");
        command
    };
    assert_eq!(
        succeeds(&mut uvx(&["--version"])),
        format!("reasons {VERSION}\n")
    );
    assert_eq!(
        succeeds(&mut uvx(&["run", "hermes", "--help"])),
        hermes_help
    );
}
