#!/usr/bin/env bash
# make setup's toolchain choice (scripts/toolchain.sh) on a machine without a
# toolchain of its own: with a PATH and HOME that hide rustup (~/.cargo) and
# any non-system Python (pyenv), and an empty cache, the plan must take the
# distribution's Rust (Debian's packages, or a Debian rustc already in
# /usr/bin), bindgen from Debian or built by cargo into the cache (never
# ~/.cargo), and the Python tools in a virtual environment in the cache made
# from the system's python3.  With the machine's own PATH it must take what is
# already here, as setup did (the cache's toolchain.env).  The package sets
# per Debian release are checked with made-up os-release files (test hooks,
# taken only with MESON_SDHC_TEST_HOOKS=1: without it an os-release file
# from the environment is not read, nor a minimum version).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/toolchain-plan.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }

mkdir -p "$T/home" "$T/cache"
# the kernel's minimum versions as setup read them (reading the tarball takes
# a minute on a busy machine)
CACHE_DIR=${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}
cp "$CACHE_DIR"/min-tool-version-*.sh "$T/cache/" 2>/dev/null || true
bare() { # command...: run with the system's PATH only, an empty HOME and cache
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$T/home" MESON_SDHC_CACHE="$T/cache" \
        ${TOOLCHAIN_OS_RELEASE:+TOOLCHAIN_OS_RELEASE="$TOOLCHAIN_OS_RELEASE"} \
        ${TOOLCHAIN_MIN_RUSTC:+TOOLCHAIN_MIN_RUSTC="$TOOLCHAIN_MIN_RUSTC"} \
        ${MESON_SDHC_TEST_HOOKS:+MESON_SDHC_TEST_HOOKS="$MESON_SDHC_TEST_HOOKS"} \
        bash -c ". '$TOP/scripts/common.sh'; $*"
}

plan=$(bare toolchain_plan)
echo "$plan" | sed 's/^/    /'
rust=$(echo "$plan" | grep '^rust ')
case "$rust" in
"rust debian "*) ok "Rust from Debian's packages: ${rust#rust debian }" ;;
"rust existing /usr/bin "*) ok "the Debian rustc already in /usr/bin" ;;
*) bad "Rust: '$rust' is not the distribution's toolchain" ;;
esac
case "$rust" in *"$HOME"* | *.cargo* | *rustup*) bad "Rust plan names rustup or HOME: $rust" ;; esac
bg=$(echo "$plan" | grep '^bindgen ')
case "$bg" in
"bindgen debian "* | "bindgen existing /usr/bin "*) ok "bindgen from Debian" ;;
"bindgen cargo "*" $T/cache/tools/"*) ok "bindgen built by cargo into the cache" ;;
*) bad "bindgen: '$bg'" ;;
esac
py=$(echo "$plan" | grep '^python ')
[ "$py" = "python venv $T/cache/venv-tools (from /usr/bin/python3)" ] &&
    ok "Python tools: a venv in the cache from /usr/bin/python3" || bad "Python: '$py'"

# The release's package set, and a candidate new enough on this machine.
min=$(bare 'kernel_min_version rustc')
[ -n "$min" ] && ok "the kernel's minimum rustc: $min" || bad "no minimum rustc"
rel=$(bare debian_release)
case "$rel" in
12) want="rustc-web cargo-web rustfmt-web rust-web-clippy rust-web-src" ;;
*) want="rustc cargo rustfmt rust-clippy rust-src" ;;
esac
got=$(bare debian_rust_packages)
[ "$got" = "$want" ] && ok "Debian $rel: $got" || bad "Debian $rel: '$got', expected '$want'"
for r in 12 13 14; do
    printf 'ID=debian\nVERSION_ID="%s"\n' "$r" > "$T/os-release-$r"
    got=$(MESON_SDHC_TEST_HOOKS=1 TOOLCHAIN_OS_RELEASE="$T/os-release-$r" bare debian_rust_packages)
    case "$r" in
    12) want="rustc-web cargo-web rustfmt-web rust-web-clippy rust-web-src" ;;
    *) want="rustc cargo rustfmt rust-clippy rust-src" ;;
    esac
    [ "$got" = "$want" ] && ok "os-release $r: $got" || bad "os-release $r: '$got', expected '$want'"
done
# the test hooks, without MESON_SDHC_TEST_HOOKS=1: ignored (setup runs
# debian_release as root, and it sources the os-release file)
printf 'ID=debian\nVERSION_ID="77"\ntouch %s/sourced\n' "$T" > "$T/os-release-hook"
got=$(TOOLCHAIN_OS_RELEASE="$T/os-release-hook" bare debian_release 2> "$T/hook.err")
[ ! -e "$T/sourced" ] && [ "$got" = "$rel" ] && grep -q 'ignoring TOOLCHAIN_OS_RELEASE' "$T/hook.err" &&
    ok "TOOLCHAIN_OS_RELEASE ignored without MESON_SDHC_TEST_HOOKS=1 (not sourced)" ||
    bad "TOOLCHAIN_OS_RELEASE without the flag: release '$got' (here $rel), sourced: $([ -e "$T/sourced" ] && echo yes || echo no)"
got=$(TOOLCHAIN_MIN_RUSTC=99.0.0 bare 'kernel_min_version rustc' 2> /dev/null)
[ "$got" = "$min" ] && ok "TOOLCHAIN_MIN_RUSTC ignored without MESON_SDHC_TEST_HOOKS=1" || bad "TOOLCHAIN_MIN_RUSTC without the flag: '$got'"
got=$(MESON_SDHC_TEST_HOOKS=1 TOOLCHAIN_MIN_RUSTC=99.0.0 bare 'kernel_min_version rustc')
[ "$got" = 99.0.0 ] && ok "TOOLCHAIN_MIN_RUSTC taken with MESON_SDHC_TEST_HOOKS=1" || bad "TOOLCHAIN_MIN_RUSTC with the flag: '$got'"

# version_ge, by which the plan accepts or refuses a toolchain
bare 'version_ge 1.96.0 1.85.0 && version_ge 1.85.0 1.85.0 && ! version_ge 1.84.1 1.85.0 &&
      version_ge 0.72.1 0.71.1 && ! version_ge 0.60.1 0.71.1' &&
    ok "version comparison" || bad "version comparison"

# With the machine's own environment: the toolchain setup recorded.
if [ ! -f "$CACHE_DIR/toolchain.env" ]; then
    bad "no $CACHE_DIR/toolchain.env: make setup records its choice there"
else
    here=$(bash -c ". '$TOP/scripts/common.sh'; toolchain_plan" | grep '^rust ')
    # shellcheck disable=SC1091
    rec=$(. "$CACHE_DIR/toolchain.env"; echo "$RUST_BIN")
    case "$here" in
    "rust existing $rec "*) ok "here: $here (as recorded in toolchain.env)" ;;
    *) bad "here: '$here', toolchain.env says RUST_BIN=$rec" ;;
    esac
fi
[ "$fail" = 0 ]
