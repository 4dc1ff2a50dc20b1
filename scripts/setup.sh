#!/usr/bin/env bash
# make setup: install everything the emulated board needs, on Debian 12 or newer.
# Idempotent; run as root.  Mirrors are taken from the system's own apt
# configuration, never written here.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
# shellcheck source=apt-suites.sh
. "$(dirname "$0")/apt-suites.sh"

[ "$(id -u)" = 0 ] || die "make setup must run as root (it installs packages)"
command -v apt-get >/dev/null || die "this is not a Debian system (no apt-get)"
export DEBIAN_FRONTEND=noninteractive

# --- 1. apt suites --------------------------------------------------------------
# Debian 12: trixie and trixie-backports (deb, deb-src), pinned to priority 100
# and 90 so that nothing installed is upgraded from them (apt takes from them
# only what is asked for by version or is not in bookworm: linux-source-7.3
# is only in trixie-backports), and deb-src for bookworm; backports below
# trixie, so that during an upgrade to Debian 13 the release is never tied
# with its backports.  Debian 13 and later: trixie-backports (deb, deb-src) at 90 and
# deb-src for the release itself and bookworm; its own suites keep their
# priority.  Both files are compared whole on every run and rewritten when
# they differ (scripts/apt-suites.sh), so that a release upgrade gets the new
# release's files.  The mirror is the one the system's own sources name.
mirror_uri() {
    local u=""
    if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
        u=$(grep -h -E '^URIs:' /etc/apt/sources.list.d/*.sources |
            awk '{for (i=2;i<=NF;i++) print $i}' | grep -v -- '-security' |
            grep -E '/debian/?$' | head -1 || true)
    fi
    if [ -z "$u" ] && [ -f /etc/apt/sources.list ]; then
        u=$(grep -E '^deb ' /etc/apt/sources.list | grep -v -- '-security' |
            awk '{for (i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' | head -1 || true)
    fi
    echo "$u"
}
SRC=/etc/apt/sources.list.d/meson-sdhc-rs-trixie.sources
PIN=/etc/apt/preferences.d/meson-sdhc-rs-trixie
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
uri=$(mirror_uri)
[ -n "$uri" ] || die "cannot find the Debian mirror in the system's apt sources"
need_update=0
if apt_suite_files "$(debian_release)" "$codename" "$uri" "$SRC" "$PIN"; then need_update=1; fi

apt_updated=0
apt_update() {
    if [ "$apt_updated" = 0 ]; then
        log "apt-get update"
        # A mirror mid-sync can fail one index; retry, then go on and let the
        # installs below say what is really missing.
        local i
        for i in 1 2 3; do
            apt-get update -qq && break
            log "apt-get update failed (try $i of 3)"
            sleep 5
        done
        apt_updated=1
    fi
}
[ "$need_update" = 0 ] || apt_update

missing_pkgs() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
    done
}
install_pkgs() {
    local m
    m=$(missing_pkgs "$@")
    [ -z "$m" ] && return 0
    apt_update
    log "installing: ${m//$'\n'/ }"
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $m >/dev/null || die "apt-get install failed for: $m"
}

# --- 2. Rust toolchain and bindgen (scripts/toolchain.sh says which) -----------
# Chosen before the other packages, so that a bindgen cargo builds compiles in
# the background while they install.
plan=$(toolchain_plan)
if ! echo "$plan" | grep -q '^rust existing' || ! echo "$plan" | grep -q '^bindgen existing'; then
    apt_update
    plan=$(toolchain_plan)
fi
log "toolchain: $(echo "$plan" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
read -r _ rust_how rust_a rust_b <<< "$(echo "$plan" | grep '^rust ')"
case "$rust_how" in
existing) RUST_BIN=$rust_a ;;
debian)
    # shellcheck disable=SC2086 # a list of packages
    install_pkgs $rust_b
    RUST_BIN=/usr/bin
    ;;
*) die "no Rust toolchain: $rust_a $rust_b" ;;
esac
read -r _ bg_how bg_a bg_b <<< "$(echo "$plan" | grep '^bindgen ')"
BINDGEN_PID=""
case "$bg_how" in
existing) BINDGEN_BIN=$bg_a ;;
debian)
    install_pkgs bindgen
    BINDGEN_BIN=/usr/bin
    ;;
cargo)
    # cargo fetches over HTTPS: the CA bundle first (a minimal Debian has none).
    install_pkgs ca-certificates
    log "cargo install bindgen-cli $bg_a into $bg_b, in the background (a few minutes)"
    rm -rf "$bg_b"
    mkdir -p "$CACHE/tools"
    PATH="$RUST_BIN:$PATH" cargo install --quiet --locked --root "$bg_b" bindgen-cli --version "$bg_a" \
        > "$CACHE/tools/bindgen-$bg_a.log" 2>&1 &
    BINDGEN_PID=$!
    # a setup that stops before waiting for it stops it too
    trap '[ -z "$BINDGEN_PID" ] || kill "$BINDGEN_PID" 2>/dev/null || true' EXIT
    BINDGEN_BIN=$bg_b/bin
    ;;
*) die "no bindgen: $bg_a" ;;
esac

# --- 3. packages from the base system -----------------------------------------
install_pkgs clang-19 lld-19 llvm-19 libclang-19-dev \
    gcc libc6-dev gcc-arm-linux-gnueabihf libc6-dev-armhf-cross \
    make bc bison flex libssl-dev libelf-dev cpio xz-utils kmod dpkg-dev perl patch \
    ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev pkg-config \
    python3 python3-venv python3-dev swig git ca-certificates zstd socat e2fsprogs

# --- 4. linux-source 7.3 -------------------------------------------------------
if ! dpkg-query -W "linux-source-$KVER_SERIES" >/dev/null 2>&1; then
    apt_update
    log "installing linux-source-$KVER_SERIES"
    apt-get install -y -qq --no-install-recommends "linux-source-$KVER_SERIES" >/dev/null ||
        die "cannot install linux-source-$KVER_SERIES from the added suites"
fi

# --- 5. the library sources of this rustc ------------------------------------
rustc_ver=$(rustc_version "$RUST_BIN")
[ -n "$rustc_ver" ] || die "$RUST_BIN/rustc does not run"
# The library sources of exactly this rustc: rustup's rust-src component, the
# Debian package that came with it, or Debian's rust-src of the same version.
if [ -z "$(RUSTC=$RUST_BIN/rustc find_rust_lib_src)" ]; then
    cand=$(apt-cache madison rust-src | awk -F'|' '{gsub(/ /,"",$2); print $2}' |
           grep -E "^${rustc_ver//./\\.}(\+|-|~)" | head -1 || true)
    if [ -z "$cand" ]; then
        avail=$(apt-cache madison rust-src | awk -F'|' '{gsub(/ /,"",$2); print $2}' | tr '\n' ' ')
        die "rustc is $rustc_ver ($RUST_BIN) but it has no library sources and no rust-src package has that version (available: ${avail:-none}): add them (rustup component add rust-src) or take that rustc off PATH, so that setup takes Debian's toolchain"
    fi
    log "installing rust-src=$cand (rustc $rustc_ver)"
    apt-get install -y -qq --no-install-recommends --allow-downgrades "rust-src=$cand" >/dev/null ||
        die "cannot install rust-src=$cand"
fi
# --- 6. Python tools for QEMU's build (meson, pycotap) and the documentation
# check (docutils): a virtual environment in the cache -------------------------
# Every Python package setup installs is pinned, with the hashes of its files
# (scripts/requirements/*.txt, pip --require-hashes): wheels only, but for
# pylibfdt, which has none and is built from its pinned source with the
# pinned build tools of dtschema-build.txt (no build isolation, which would
# fetch build tools unpinned).  A virtual environment is made anew when its
# requirements files differ from the ones it was made with.
REQS="$TOP/scripts/requirements"
# venv_current VENV REQ...: VENV was made from exactly these files, and runs
venv_current() {
    local v=$1; shift
    [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import sys' 2>/dev/null &&
        [ -f "$v/meson-sdhc-requirements" ] && [ "$(cat "$@")" = "$(cat "$v/meson-sdhc-requirements")" ]
}
# venv_make VENV: a new, empty virtual environment
venv_make() {
    rm -rf "$1"
    python3 -m venv "$1" || die "python3 -m venv $1 failed"
}
# pip_pinned VENV REQ [PIP OPTIONS]: install REQ, every file hash-checked
pip_pinned() {
    local v=$1 r=$2; shift 2
    "$v/bin/python" -m pip install -q --require-hashes --only-binary :all: "$@" -r "$r" ||
        die "pip install -r $r failed"
}
if ! venv_current "$TOOLS_VENV" "$REQS/tools.txt" ||
   ! "$TOOLS_VENV/bin/python" -c 'import mesonbuild, pycotap, docutils' 2>/dev/null; then
    log "meson, pycotap and docutils into $TOOLS_VENV ($REQS/tools.txt)"
    venv_make "$TOOLS_VENV"
    pip_pinned "$TOOLS_VENV" "$REQS/tools.txt"
    cat "$REQS/tools.txt" > "$TOOLS_VENV/meson-sdhc-requirements"
fi

# --- 7. sources and guest binaries into the cache -----------------------------
SRCDIR="$CACHE/src"
mkdir -p "$SRCDIR"
# armhf packages come through a private apt state (armhf only, base suite
# only), so the system does not take armhf as a foreign architecture.
armhf_fetch() { # package dest: download package:armhf and unpack it into dest
    local pkg=$1 dest=$2 tmp ast suite
    log "fetching $pkg:armhf"
    tmp=$(mktemp -d)
    ast="$CACHE/apt-armhf"
    mkdir -p "$ast/lists/partial" "$ast/cache/archives/partial"
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    printf 'deb [arch=armhf signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
        "$(mirror_uri)" "$suite" > "$ast/sources.list"
    aopt=(-o APT::Architecture=armhf -o APT::Architectures::=armhf
          -o Dir::State::Lists="$ast/lists" -o Dir::Cache="$ast/cache"
          -o Dir::Etc::SourceList="$ast/sources.list" -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::State::status=/dev/null)
    if [ -z "${ARMHF_UPDATED:-}" ]; then
        apt-get -qq "${aopt[@]}" update || log "armhf index update reported errors"
        ARMHF_UPDATED=1
    fi
    (cd "$tmp" && apt-get -qq "${aopt[@]}" download "$pkg:armhf") || die "cannot download $pkg:armhf"
    rm -rf "$dest"
    dpkg -x "$tmp/$pkg"_*_armhf.deb "$dest"
    rm -rf "$tmp"
}
if ! ls "$SRCDIR"/busybox-static/bin/busybox >/dev/null 2>&1; then
    armhf_fetch busybox-static "$SRCDIR/busybox-static"
    # Debian 13's package has it in usr/bin (merged /usr), Debian 12's in bin
    if [ ! -e "$SRCDIR/busybox-static/bin/busybox" ] && [ -x "$SRCDIR/busybox-static/usr/bin/busybox" ]; then
        mkdir -p "$SRCDIR/busybox-static/bin"
        ln -s ../usr/bin/busybox "$SRCDIR/busybox-static/bin/busybox"
    fi
    [ -x "$SRCDIR/busybox-static/bin/busybox" ] || die "no busybox in the busybox-static package"
fi
# e2fsprogs' static e2fsck for the guest (first-contact's file mode checks the
# file system with it): the package ships sbin/e2fsck.static (usr/sbin
# with a merged /usr)
if ! ls "$SRCDIR"/e2fsck-static/sbin/e2fsck.static >/dev/null 2>&1; then
    armhf_fetch e2fsck-static "$SRCDIR/e2fsck-static"
    if [ ! -e "$SRCDIR/e2fsck-static/sbin/e2fsck.static" ] && [ -x "$SRCDIR/e2fsck-static/usr/sbin/e2fsck.static" ]; then
        mkdir -p "$SRCDIR/e2fsck-static/sbin"
        ln -s ../usr/sbin/e2fsck.static "$SRCDIR/e2fsck-static/sbin/e2fsck.static"
    fi
    [ -x "$SRCDIR/e2fsck-static/sbin/e2fsck.static" ] || die "no e2fsck.static in the e2fsck-static package"
fi
# libaio for fio's libaio engine (linked statically)
if ! ls "$SRCDIR"/libaio-armhf/usr/lib/arm-linux-gnueabihf/libaio.a >/dev/null 2>&1; then
    armhf_fetch libaio-dev "$SRCDIR/libaio-armhf"
fi
fetch_source() { # name version-regex: newest version whose upstream tarball downloads
    local name=$1 re=$2 ver vers
    if ls "$SRCDIR/$name"_*.orig.tar.* >/dev/null 2>&1; then return 0; fi
    apt_update
    vers=$(apt-cache showsrc "$name" | awk '/^Version:/ {print $2}' | grep -E "$re" | sort -Vr -u || true)
    [ -n "$vers" ] || die "no source package for $name matching $re"
    for ver in $vers; do
        log "fetching source $name=$ver"
        # The Debian diff may be missing on a mirror; the upstream tarball is enough.
        (cd "$SRCDIR" && apt-get source -qq --download-only "$name=$ver" >/dev/null 2>&1) || true
        if ls "$SRCDIR/$name"_*.orig.tar.* >/dev/null 2>&1; then return 0; fi
        log "source $name=$ver is not on the mirror"
    done
    die "no source tarball for $name could be downloaded (tried: ${vers//$'\n'/ })"
}
fetch_source qemu "^1:${QEMU_SERIES//./\\.}\."
fetch_source fio '.'

# --- 7b. board checks: dtc, dt-validate (dtschema, PyPI, in a venv) and dkms --
# tests/board/dt-validate.sh validates the emulated board's DT with the
# kernel's own bindings; tests/board/install.sh builds the module with Debian's
# dkms (into temporary trees, never the system's).
install_pkgs device-tree-compiler dkms
# the shellcheck package: tests/host/shellcheck.sh checks the scripts a board runs
install_pkgs shellcheck
DTS_VENV="$CACHE/venv-dtschema"
if ! venv_current "$DTS_VENV" "$REQS/dtschema-build.txt" "$REQS/dtschema.txt" ||
   ! [ -x "$DTS_VENV/bin/dt-validate" ]; then
    log "dtschema into $DTS_VENV ($REQS/dtschema.txt; pylibfdt built from source)"
    venv_make "$DTS_VENV"
    pip_pinned "$DTS_VENV" "$REQS/dtschema-build.txt"
    # pylibfdt's build runs swig from the venv (the pinned swig wheel)
    PATH="$DTS_VENV/bin:$PATH" pip_pinned "$DTS_VENV" "$REQS/dtschema.txt" --no-build-isolation --no-binary pylibfdt
    cat "$REQS/dtschema-build.txt" "$REQS/dtschema.txt" > "$DTS_VENV/meson-sdhc-requirements"
fi

# --- 7c. make test-board: the card image of tests/board-kernel/ ---------------
# A partition table (sfdisk, Debian's fdisk package) and an ext4 root file
# system made from a directory (mkfs.ext4 -d, e2fsprogs), on the host;
# mkimage (u-boot-tools), which the board kit's installer needs there.
install_pkgs fdisk e2fsprogs u-boot-tools

# --- 7f. make test: a real U-Boot runs the board kit's boot scripts -----------
# (tests/host/uboot-script.sh): U-Boot's qemu_arm build (u-boot-qemu) under
# the project's own QEMU (virt, with virtio-blk), a FAT image (dosfstools,
# mtools; mkimage and mkenvimage from u-boot-tools above).
install_pkgs u-boot-qemu mtools dosfstools

# --- 7e. make board-kit (SETUP_BOARD_KIT=1): the kernel's bindeb-pkg -----------
# (debhelper; rsync for its headers_install), mkimage (u-boot-tools) for the
# kit's uImage; not needed by make test.
if [ "${SETUP_BOARD_KIT:-0}" = 1 ]; then
    install_pkgs debhelper rsync u-boot-tools
fi

# --- 7d. bindgen ready; the choice recorded -----------------------------------
if [ -n "$BINDGEN_PID" ]; then
    log "waiting for the bindgen build"
    bg_rc=0
    wait "$BINDGEN_PID" || bg_rc=$?
    BINDGEN_PID=""
    [ "$bg_rc" = 0 ] || { tail -20 "$CACHE/tools/bindgen-$bg_a.log" >&2; die "cargo install bindgen-cli failed (log: $CACHE/tools/bindgen-$bg_a.log)"; }
fi
printf 'RUST_BIN=%q\nBINDGEN_BIN=%q\n' "$RUST_BIN" "$BINDGEN_BIN" > "$TOOLCHAIN_ENV"
# A folder of links to just these tools, which the build puts first on PATH
# (the toolchain's own folder may be /usr/bin, which holds everything else too)
rm -rf "$TOOLCHAIN_BIN"
mkdir -p "$TOOLCHAIN_BIN"
for t in rustc rustdoc cargo rustfmt cargo-fmt clippy-driver cargo-clippy; do
    [ ! -x "$RUST_BIN/$t" ] || ln -s "$RUST_BIN/$t" "$TOOLCHAIN_BIN/$t"
done
ln -s "$BINDGEN_BIN/bindgen" "$TOOLCHAIN_BIN/bindgen"
log "Rust $rustc_ver from $RUST_BIN, bindgen $(bindgen_version "$BINDGEN_BIN/bindgen") from $BINDGEN_BIN"

# --- 8. check the tools against the kernel's minimum versions ------------------
kbuild_env
tarball=$(linux_tarball)
[ -n "$tarball" ] || die "linux-source-$KVER_SERIES has no tarball"
minv=$(min_tool_version_script) || die "cannot read scripts/min-tool-version.sh from $tarball"
fail=0
check_min() { # tool have
    local tool=$1 have=$2 want
    want=$(sh "$minv" "$tool" 2>/dev/null || echo 0)
    if [ -z "$have" ]; then
        echo "  MISSING  $tool (need >= $want)"; fail=1
    elif [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
        echo "  TOO OLD  $tool $have (need >= $want)"; fail=1
    else
        echo "  ok       $tool $have (>= $want)"
    fi
}
echo "tool versions against $(basename "$tarball")/scripts/min-tool-version.sh:"
check_min llvm "$(clang$LLVM_SUFFIX -dumpversion 2>/dev/null || true)"
check_min rustc "$rustc_ver"
check_min bindgen "$(bindgen --version 2>/dev/null | awk '{print $2}' || true)"
for t in arm-linux-gnueabihf-gcc ld.lld$LLVM_SUFFIX ninja pkg-config; do
    command -v "$t" >/dev/null || { echo "  MISSING  $t"; fail=1; }
done
[ -d "$(rust_lib_src)" ] || { echo "  MISSING  rust-src library folder"; fail=1; }
[ "$fail" = 0 ] || die "some tools are missing or too old (see above)"
log "setup complete"
