#!/usr/bin/env python3
"""One wheel of `reasons` for one platform, from a release archive unpacked (dist/pip/build runs
this once per archive):

    wheel.py --root DIR --target TARGET --version X.Y.Z --summary TEXT --homepage URL \
             --keywords a,b --out DIR

DIR is `reasons-X.Y.Z-TARGET/` as dist/build packs it. The wheel holds no Python: its
`.data/scripts/reasons` is the binary, which pip and uv put on PATH; its `.data/data/share/` has
the man pages and completions, installed under the environment's `share/`; the licenses go in
`.dist-info/licenses/`. The platform tag is read from the binary itself, so that pip installs the
wheel only where the binary runs. The standard library only: a release machine needs python3 and
nothing from PyPI. The same archive and SOURCE_DATE_EPOCH give the same bytes.
"""

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import struct
import sys
import time
import zipfile

# The release's targets: the wheel's word for the CPU, and the binary's own (ELF e_machine,
# Mach-O cputype), checked so that a binary packed under the wrong name is refused.
LINUX = {
    "x86_64-unknown-linux-gnu": ("x86_64", 62),
    "aarch64-unknown-linux-gnu": ("aarch64", 183),
}
MACOS = {
    "x86_64-apple-darwin": ("x86_64", 0x01000007),
    "aarch64-apple-darwin": ("arm64", 0x0100000C),
}

# The libraries a manylinux wheel may link without carrying them (PEP 600: those every glibc
# system has; auditwheel's policy lists the same for every manylinux_2_N).
MANYLINUX_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libutil.so.1",
    "libresolv.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}


def fail(message):
    sys.exit(f"dist/pip/wheel.py: {message}")


def elf_needs(binary, machine):
    """The libraries a 64-bit little-endian ELF program links (DT_NEEDED) and the symbol versions
    it needs from them (GNU_verneed), read through its section headers."""
    if binary[:4] != b"\x7fELF" or binary[4] != 2 or binary[5] != 1:
        fail("not a 64-bit little-endian ELF program")
    (e_machine,) = struct.unpack_from("<H", binary, 18)
    if e_machine != machine:
        fail(f"the binary is for ELF machine {e_machine}, the target's is {machine}")
    (shoff,) = struct.unpack_from("<Q", binary, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", binary, 0x3A)
    # (type, offset, size, link, info) of each section.
    sections = []
    for index in range(shnum):
        fields = struct.unpack_from("<IIQQQQIIQQ", binary, shoff + index * shentsize)
        sections.append((fields[1], fields[4], fields[5], fields[6], fields[7]))

    def string(table, at):
        start = sections[table][1] + at
        return binary[start : binary.index(b"\0", start)].decode()

    libraries, versions = [], []
    for kind, offset, size, link, info in sections:
        if kind == 6:  # SHT_DYNAMIC
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", binary, at)
                if tag == 0:  # DT_NULL
                    break
                if tag == 1:  # DT_NEEDED
                    libraries.append(string(link, value))
        elif kind == 0x6FFFFFFE:  # SHT_GNU_verneed: `info` entries, each with its versions
            need = offset
            for _ in range(info):
                _, count, _, aux, following = struct.unpack_from("<HHIII", binary, need)
                entry = need + aux
                for _ in range(count):
                    _, _, _, name, after = struct.unpack_from("<IHHII", binary, entry)
                    versions.append(string(link, name))
                    entry += after
                need += following
    return libraries, versions


def linux_tag(binary, target):
    """manylinux_2_N for the newest glibc symbol version the binary needs (PEP 600), so that pip
    on an older glibc, where the binary would not start, takes no wheel rather than this one."""
    arch, machine = LINUX[target]
    libraries, versions = elf_needs(binary, machine)
    if "libc.so.6" not in libraries:
        fail(f"{target}: the binary does not link glibc (libraries: {libraries})")
    foreign = sorted(set(libraries) - MANYLINUX_LIBRARIES)
    if foreign:
        fail(f"{target}: the binary links {foreign}, which a manylinux system need not have")
    glibc_versions = re.compile(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?")
    glibc = max(
        ((int(m[1]), int(m[2])) for m in map(glibc_versions.fullmatch, versions) if m),
        default=(2, 17),
    )
    if glibc <= (2, 17):
        # pip older than 20.3 knows this floor only by its manylinux2014 alias.
        return f"manylinux_2_17_{arch}.manylinux2014_{arch}"
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"


def macos_tag(binary, target):
    """macosx_X_Y for the minimum macOS the binary was linked for (LC_BUILD_VERSION, or the older
    LC_VERSION_MIN_MACOSX)."""
    arch, cputype = MACOS[target]
    magic, cpu, _, _, commands = struct.unpack_from("<IIIII", binary, 0)
    if magic != 0xFEEDFACF:
        fail(f"{target}: not a 64-bit little-endian Mach-O program (a universal one is not packed)")
    if cpu != cputype:
        fail(f"{target}: the binary is for Mach-O cputype {cpu:#x}, the target's is {cputype:#x}")
    minimum, at = None, 32
    for _ in range(commands):
        command, size = struct.unpack_from("<II", binary, at)
        if command == 0x32:  # LC_BUILD_VERSION: platform, minos, sdk, …
            (minimum,) = struct.unpack_from("<I", binary, at + 12)
        elif command == 0x24:  # LC_VERSION_MIN_MACOSX: version, sdk
            (minimum,) = struct.unpack_from("<I", binary, at + 8)
        at += size
    if minimum is None:
        fail(f"{target}: the binary says no minimum macOS version")
    major, minor = minimum >> 16, (minimum >> 8) & 0xFF
    if major >= 11:
        # From macOS 11 on, pip knows X_0 only: a binary for 11.3 goes in a wheel for 12.
        major, minor = (major, 0) if minor == 0 else (major + 1, 0)
    return f"macosx_{major}_{minor}_{arch}"


def pep440(version):
    """Cargo's semantic version in PEP 440's words: 1.2.3-rc.1 is 1.2.3rc1."""
    found = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.(\d+))?", version)
    if not found:
        fail(f"version {version}: no PEP 440 spelling known for it")
    release, stage, number = found.groups()
    return release + ({"alpha": "a", "beta": "b", "rc": "rc"}[stage] + number if stage else "")


def description(readme, homepage, tag):
    """The README with its relative links made absolute at the release's tag, since PyPI shows
    the description away from the repository: images from the raw files, pages on GitHub."""

    def absolute(link):
        bang, text, target = link.groups()
        kind = "raw" if bang else "blob"
        return f"{bang}[{text}]({homepage}/{kind}/{tag}/{target})"

    return re.sub(r"(!?)\[([^\]]*)\]\((?![a-z]+:|#)([^)\s]+)\)", absolute, readme)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for option in ("root", "target", "version", "summary", "homepage", "keywords", "out"):
        parser.add_argument(f"--{option}", required=True)
    args = parser.parse_args()

    def read(name):
        with open(os.path.join(args.root, name), "rb") as file:
            return file.read()

    binary = read("reasons")
    if args.target in LINUX:
        platform = linux_tag(binary, args.target)
    elif args.target in MACOS:
        platform = macos_tag(binary, args.target)
    else:
        fail(f"no wheel platform known for {args.target}")
    version = pep440(args.version)
    tag = f"py3-none-{platform}"
    data = f"reasons-{version}.data"
    info = f"reasons-{version}.dist-info"
    licenses = ["LICENSE-APACHE", "LICENSE-MIT"]

    # (name in the wheel, bytes, executable): what gets installed, then the .dist-info, which
    # installers expect at the end.
    payload = [(f"{data}/scripts/reasons", binary, True)]
    for page in sorted(os.listdir(os.path.join(args.root, "man"))):
        payload.append((f"{data}/data/share/man/man1/{page}", read(f"man/{page}"), False))
    # Where a prefix's shells look (install.sh --to PREFIX/bin puts them in the same places).
    for shell_place, made in [
        ("bash-completion/completions/reasons", "reasons.bash"),
        ("zsh/site-functions/_reasons", "_reasons"),
        ("fish/vendor_completions.d/reasons.fish", "reasons.fish"),
    ]:
        payload.append((f"{data}/data/share/{shell_place}", read(f"completions/{made}"), False))
    payload.sort()

    homepage = args.homepage
    metadata = "".join(
        f"{field}: {value}\n"
        for field, value in [
            # 2.4 for License-Expression and License-File (PEP 639).
            ("Metadata-Version", "2.4"),
            ("Name", "reasons"),
            ("Version", version),
            ("Summary", args.summary),
            ("Home-page", homepage),
            ("Project-URL", f"Repository, {homepage}"),
            ("Project-URL", f"Changelog, {homepage}/blob/v{args.version}/CHANGELOG.md"),
            ("Keywords", args.keywords),
            ("License-Expression", "MIT OR Apache-2.0"),
            *[("License-File", name) for name in licenses],
            ("Description-Content-Type", "text/markdown; charset=UTF-8; variant=GFM"),
        ]
    )
    readme = description(read("README.md").decode(), homepage, f"v{args.version}")
    metadata += "\n" + readme
    wheel = "".join(
        f"{field}: {value}\n"
        for field, value in [
            ("Wheel-Version", "1.0"),
            ("Generator", "reasons dist/pip/build"),
            ("Root-Is-Purelib", "false"),
            *[("Tag", f"py3-none-{one}") for one in platform.split(".")],
        ]
    )
    payload += [(f"{info}/METADATA", metadata.encode(), False)]
    payload += [(f"{info}/WHEEL", wheel.encode(), False)]
    payload += [(f"{info}/licenses/{name}", read(name), False) for name in licenses]

    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    for name, content, _ in payload:
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
        rows.writerow([name, f"sha256={digest.decode()}", len(content)])
    rows.writerow([f"{info}/RECORD", "", ""])
    payload.append((f"{info}/RECORD", record.getvalue().encode(), False))

    # Zip times are local dates from 1980 on; the epoch's UTC date, as reproducible builds do.
    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "0")), 315532800)
    date = time.gmtime(epoch)[:6]
    path = os.path.join(args.out, f"reasons-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w") as archive:
        for name, content, executable in payload:
            entry = zipfile.ZipInfo(name, date)
            entry.create_system = 3  # Unix, so that the mode below is read
            entry.external_attr = (0o100755 if executable else 0o100644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, content, compresslevel=9)
    print(path)


if __name__ == "__main__":
    main()
