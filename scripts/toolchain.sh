# The Rust toolchain, bindgen and the Python tools the build uses: which ones
# `make setup` takes, and the PATH the build scripts then run with.  Sourced
# by scripts/common.sh, never run.
#
# Rust (rustc, cargo, rustfmt, clippy and the library sources, RUST_LIB_SRC):
#   1. a toolchain already on the machine, used where present: rustup's
#      (~/.cargo/bin) or one on PATH, if its rustc is at least the kernel's
#      minimum and cargo, rustfmt and clippy-driver sit beside it;
#   2. else Debian's packages: on Debian 12 the rustc-web set from bookworm
#      and bookworm-security (rustc-web cargo-web rustfmt-web rust-web-clippy
#      rust-web-src), on Debian 13 and later rustc cargo rustfmt rust-clippy
#      rust-src; the version apt would install must be at least the kernel's
#      minimum.
# bindgen: one on PATH, in ~/.cargo/bin or in the cache (version at least
# the kernel's minimum); else Debian's bindgen package where its candidate is
# new enough (Debian 13); else `cargo install bindgen-cli` of BINDGEN_VERSION
# into the cache ($CACHE/tools/bindgen-VERSION), with the chosen cargo.
# Python tools (meson for QEMU's build, pycotap): a virtual environment in the
# cache ($CACHE/venv-tools), never the system's Python.
#
# The choice is written to $CACHE/toolchain.env (RUST_BIN and BINDGEN_BIN,
# folders) and made a folder of links, $CACHE/toolchain-bin, which
# toolchain_path puts first on PATH.
# shellcheck shell=bash

BINDGEN_VERSION=0.72.1
TOOLCHAIN_ENV="$CACHE/toolchain.env"
TOOLCHAIN_BIN="$CACHE/toolchain-bin"
TOOLS_VENV="$CACHE/venv-tools"

# toolchain_hook NAME: the value of the test hook NAME (TOOLCHAIN_MIN_RUSTC,
# TOOLCHAIN_MIN_BINDGEN, TOOLCHAIN_OS_RELEASE), honoured only with
# MESON_SDHC_TEST_HOOKS=1 in the environment, as make setup runs these
# functions as root (an os-release file is sourced); else nothing, and a
# note on stderr when it is set.
toolchain_hook() {
    local v=${!1:-}
    [ -n "$v" ] || return 0
    if [ "${MESON_SDHC_TEST_HOOKS:-}" = 1 ]; then
        echo "$v"
    else
        echo "toolchain: ignoring $1: a test hook (honoured only with MESON_SDHC_TEST_HOOKS=1)" >&2
    fi
}

# version_ge A B: A >= B as versions.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

# min_tool_version_script: linux-source's scripts/min-tool-version.sh, read
# from the tarball once and kept in the cache by the tarball's name and size.
min_tool_version_script() {
    local t f
    t=$(linux_tarball)
    [ -n "$t" ] || return 1
    f="$CACHE/min-tool-version-$(echo "$t $(stat -c %s "$t")" | sha256sum | cut -c1-16).sh"
    if [ ! -s "$f" ]; then
        { tar -xOf "$t" --wildcards '*/scripts/min-tool-version.sh' > "$f.tmp" 2>/dev/null &&
            mv "$f.tmp" "$f"; } || { rm -f "$f.tmp"; return 1; }
    fi
    echo "$f"
}

# kernel_min_version TOOL: the kernel's minimum for rustc or bindgen, from
# linux-source's scripts/min-tool-version.sh (the test hooks
# TOOLCHAIN_MIN_RUSTC and TOOLCHAIN_MIN_BINDGEN override, with
# MESON_SDHC_TEST_HOOKS=1; without the tarball, Linux 7.3's values).
kernel_min_version() {
    local tool=$1 t v=""
    case "$tool" in
    rustc) v=$(toolchain_hook TOOLCHAIN_MIN_RUSTC) ;;
    bindgen) v=$(toolchain_hook TOOLCHAIN_MIN_BINDGEN) ;;
    esac
    if [ -z "$v" ] && t=$(min_tool_version_script); then
        v=$(ARCH=arm SRCARCH=arm sh "$t" "$tool" 2>/dev/null || true)
    fi
    if [ -z "$v" ]; then
        case "$tool" in rustc) v=1.85.0 ;; bindgen) v=0.71.1 ;; esac
    fi
    echo "$v"
}

# debian_release: the major version of Debian here (12, 13, ...), 0 if unknown.
# TOOLCHAIN_OS_RELEASE: another os-release file (a test hook, with
# MESON_SDHC_TEST_HOOKS=1).
debian_release() {
    local v f
    f=$(toolchain_hook TOOLCHAIN_OS_RELEASE)
    f=${f:-/etc/os-release}
    # shellcheck source=/dev/null # os-release
    v=$(. "$f" 2>/dev/null && echo "${VERSION_ID:-}")
    case "$v" in
    [0-9]*) echo "${v%%.*}" ;;
    *)
        # shellcheck source=/dev/null # os-release
        case "$(. "$f" 2>/dev/null && echo "${VERSION_CODENAME:-}")" in
        bookworm) echo 12 ;; trixie) echo 13 ;; forky) echo 14 ;; *) echo 0 ;;
        esac
        ;;
    esac
}

# debian_rust_packages: the Debian packages of a Rust toolchain for this release.
debian_rust_packages() {
    if [ "$(debian_release)" = 12 ]; then
        echo rustc-web cargo-web rustfmt-web rust-web-clippy rust-web-src
    else
        echo rustc cargo rustfmt rust-clippy rust-src
    fi
}

# apt_candidate PKG: the version apt would install (nothing if none).
apt_candidate() {
    apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2; exit }'
}

# rustc_version DIR: the version of DIR/rustc (nothing if it does not run).
rustc_version() { "$1/rustc" --version 2>/dev/null | awk '{print $2}'; }

# existing_rust_dir: the folder of a usable Rust toolchain already here.
existing_rust_dir() {
    local d min
    min=$(kernel_min_version rustc)
    local IFS=:
    for d in "$HOME/.cargo/bin" $PATH; do
        { [ -n "$d" ] && [ -x "$d/rustc" ] && [ -x "$d/cargo" ] &&
            [ -x "$d/rustfmt" ] && [ -x "$d/clippy-driver" ]; } || continue
        version_ge "$(rustc_version "$d")" "$min" || continue
        echo "$d"
        return 0
    done
    return 1
}

# bindgen_version BIN: the version BIN reports.
bindgen_version() { "$1" --version 2>/dev/null | awk '{print $2}'; }

# existing_bindgen_dir: the folder of a usable bindgen already here.
existing_bindgen_dir() {
    local d min
    min=$(kernel_min_version bindgen)
    local IFS=:
    for d in $PATH "$HOME/.cargo/bin" "$CACHE/tools/bindgen-$BINDGEN_VERSION/bin"; do
        { [ -n "$d" ] && [ -x "$d/bindgen" ]; } || continue
        version_ge "$(bindgen_version "$d/bindgen")" "$min" || continue
        echo "$d"
        return 0
    done
    return 1
}

# toolchain_plan: what setup would take, one line each, changing nothing:
#   rust existing DIR VERSION | rust debian VERSION PACKAGES... | rust none REASON
#   bindgen existing DIR VERSION | bindgen debian VERSION | bindgen cargo VERSION DIR
#   python venv DIR (from PYTHON)
toolchain_plan() {
    local d v pkgs min
    min=$(kernel_min_version rustc)
    if d=$(existing_rust_dir); then
        echo "rust existing $d $(rustc_version "$d")"
    else
        pkgs=$(debian_rust_packages)
        v=$(apt_candidate "${pkgs%% *}")
        if [ -n "$v" ] && version_ge "${v%%+*}" "$min"; then
            echo "rust debian $v $pkgs"
        else
            echo "rust none Debian's ${pkgs%% *} is ${v:-not available} (need >= $min; run apt-get update?)"
        fi
    fi
    min=$(kernel_min_version bindgen)
    if d=$(existing_bindgen_dir); then
        echo "bindgen existing $d $(bindgen_version "$d/bindgen")"
    else
        v=$(apt_candidate bindgen)
        if [ -n "$v" ] && version_ge "${v%%-*}" "$min"; then
            echo "bindgen debian $v"
        else
            echo "bindgen cargo $BINDGEN_VERSION $CACHE/tools/bindgen-$BINDGEN_VERSION"
        fi
    fi
    echo "python venv $TOOLS_VENV (from $(command -v python3 || echo python3))"
}

# toolchain_path: the PATH prefix of the chosen Rust toolchain and bindgen:
# $CACHE/toolchain-bin, links to those tools alone (so that a toolchain in
# /usr/bin does not put the rest of /usr/bin first); without it, the folders
# of $CACHE/toolchain.env; before setup, rustup's folder and the cache's
# bindgen.
toolchain_path() {
    if [ -d "$TOOLCHAIN_BIN" ] && [ -e "$TOOLCHAIN_BIN/rustc" ]; then
        echo "$TOOLCHAIN_BIN"
        return 0
    fi
    local RUST_BIN="" BINDGEN_BIN=""
    # shellcheck disable=SC1090
    [ -f "$TOOLCHAIN_ENV" ] && . "$TOOLCHAIN_ENV"
    if [ -z "$RUST_BIN" ]; then
        RUST_BIN="$HOME/.cargo/bin"
    fi
    if [ -z "$BINDGEN_BIN" ]; then
        BINDGEN_BIN="$CACHE/tools/bindgen-$BINDGEN_VERSION/bin"
    fi
    echo "$BINDGEN_BIN:$RUST_BIN"
}
