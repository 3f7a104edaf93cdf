#!/bin/sh
# Installs reasons from a release archive: the binary, its man pages and shell completions.
#
#   curl -fsSL https://github.com/reasons-dev/reasons/releases/latest/download/install.sh | sh
#   sh install.sh [--to DIR] [--version VERSION] [--from URL|FOLDER]
#
# It picks the archive for this machine (Linux or macOS, x86_64 or aarch64), checks its SHA-256
# against the release's SHA256SUMS, and installs
#
#   the binary        into DIR (--to), by default ~/.local/bin
#   the man pages     into SHARE/man/man1
#   the completions   bash: SHARE/bash-completion/completions/reasons,
#                     zsh: SHARE/zsh/site-functions/_reasons,
#                     fish: FISH/reasons.fish
#
# where SHARE is $XDG_DATA_HOME (by default ~/.local/share) and FISH the folder fish reads a
# person's own completions from, $XDG_CONFIG_HOME/fish/completions (by default
# ~/.config/fish/completions); with --to a folder named `bin` (/usr/local/bin, /opt/x/bin), SHARE
# is its sibling `share` and FISH SHARE/fish/vendor_completions.d.
# The archives come from the release of VERSION on GitHub, or from --from (also
# REASONS_INSTALL_FROM): a URL base or a local folder holding the archives and SHA256SUMS.
# REASONS_VERSION sets the version as --version does.
set -eu

# The release this installer came with (dist/build writes it in); `latest` in the repository.
default_version=latest
repository=https://github.com/reasons-dev/reasons

say() { printf 'reasons install: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

to=
version=${REASONS_VERSION:-$default_version}
from=${REASONS_INSTALL_FROM:-}
while [ $# -gt 0 ]; do
    case $1 in
        --to) [ $# -ge 2 ] || fail "--to needs a folder"; to=$2; shift 2 ;;
        --to=*) to=${1#--to=}; shift ;;
        --version) [ $# -ge 2 ] || fail "--version needs a version"; version=$2; shift 2 ;;
        --version=*) version=${1#--version=}; shift ;;
        --from) [ $# -ge 2 ] || fail "--from needs a URL or a folder"; from=$2; shift 2 ;;
        --from=*) from=${1#--from=}; shift ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) fail "unknown argument $1 (see --help)" ;;
    esac
done
version=${version#v}
[ "$version" != latest ] || fail "which version? (--version VERSION, as in $repository/releases)"
[ -n "$from" ] || from=$repository/releases/download/v$version

os=$(uname -s)
arch=$(uname -m)
case $os in
    Linux) os=unknown-linux-gnu ;;
    Darwin)
        os=apple-darwin
        # A shell under Rosetta says x86_64 on Apple silicon: the native build is the one to have.
        if [ "$arch" = x86_64 ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || true)" = 1 ]; then
            arch=arm64
        fi
        ;;
    *) fail "no prebuilt reasons for $os: cargo install reasons" ;;
esac
case $arch in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) fail "no prebuilt reasons for $arch: cargo install reasons" ;;
esac
target=$arch-$os
name=reasons-$version-$target

: "${HOME:?reasons install: HOME is not set}"
[ -n "$to" ] || to=$HOME/.local/bin
if [ "$to" != "$HOME/.local/bin" ] && [ "$(basename "$to")" = bin ]; then
    share=$(dirname "$to")/share
    fish=$share/fish/vendor_completions.d
else
    share=${XDG_DATA_HOME:-$HOME/.local/share}
    fish=${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# FILE from the release into the work folder.
fetch() {
    case $from in
        http://*|https://*|file://*)
            if command -v curl >/dev/null 2>&1; then
                curl --proto '=https,http,file' -fsSL -o "$work/$1" "$from/$1" || fail "could not download $from/$1"
            elif command -v wget >/dev/null 2>&1; then
                wget -q -O "$work/$1" "$from/$1" || fail "could not download $from/$1"
            else
                fail "neither curl nor wget is installed"
            fi
            ;;
        *) cp "$from/$1" "$work/$1" 2>/dev/null || fail "no $1 in $from" ;;
    esac
}

fetch SHA256SUMS
fetch "$name.tar.gz"
expected=$(awk -v file="$name.tar.gz" '$2 == file || $2 == "*" file { print $1 }' "$work/SHA256SUMS")
[ -n "$expected" ] || fail "SHA256SUMS from $from does not list $name.tar.gz"
if command -v sha256sum >/dev/null 2>&1; then
    actual=$(sha256sum "$work/$name.tar.gz" | awk '{ print $1 }')
else
    actual=$(shasum -a 256 "$work/$name.tar.gz" | awk '{ print $1 }')
fi
[ "$actual" = "$expected" ] || fail "$name.tar.gz has SHA-256 $actual, SHA256SUMS says $expected: not installed"

tar -xzf "$work/$name.tar.gz" -C "$work"
unpacked=$work/$name
[ -x "$unpacked/reasons" ] || fail "$name.tar.gz holds no reasons binary"

mkdir -p "$to" "$share/man/man1" "$share/bash-completion/completions" \
    "$share/zsh/site-functions" "$fish"
# Through a temporary name in the same folder: a reasons running from there keeps its file.
cp "$unpacked/reasons" "$to/.reasons.new"
chmod 755 "$to/.reasons.new"
mv -f "$to/.reasons.new" "$to/reasons"
for page in "$unpacked"/man/*.1; do
    cp "$page" "$share/man/man1/"
done
cp "$unpacked/completions/reasons.bash" "$share/bash-completion/completions/reasons"
cp "$unpacked/completions/_reasons" "$share/zsh/site-functions/_reasons"
cp "$unpacked/completions/reasons.fish" "$fish/reasons.fish"

say "installed reasons $version ($target) as $to/reasons"
say "man pages in $share/man/man1; completions for bash in $share/bash-completion, zsh in $share/zsh/site-functions, fish in $fish"
case :${PATH:-}: in
    *:"$to":*) ;;
    *) say "$to is not on your PATH: add it (export PATH=\"$to:\$PATH\")" ;;
esac
