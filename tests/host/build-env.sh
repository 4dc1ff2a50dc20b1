#!/usr/bin/env bash
# The module builds where the documentation says it builds (scripts/common.sh,
# scripts/build-module.sh), against the cached test kernel, on the host:
#  1. LIBCLANG_PATH follows LLVM in its three kbuild forms: LLVM=1 (the
#     unversioned tools on PATH: here a directory of unversioned links to the
#     LLVM 19 tools, as a machine with only unversioned LLVM has them),
#     LLVM=-19 and LLVM=/usr/lib/llvm-19/bin/;
#  2. rustup's layout is accepted: a rustc whose sysroot has
#     lib/rustlib/src/rust/library (rustup's rust-src component; here a
#     symlink to Debian's rust-src, and a wrapper around the real rustc that
#     reports that sysroot) is found without Debian's package (dpkg hidden);
#     the module builds with LLVM=1 through the links (its C objects say
#     clang 19) and that RUST_LIB_SRC;
#  3. without any Rust library sources (no rust-src component, dpkg hidden)
#     and LLVM=/usr/lib/llvm-19/bin/ the module still builds against the
#     prepared tree (no RUST_LIB_SRC passed), while a kernel build
#     (rust_lib_src) stops with a message naming both places.
# rustup itself cannot download anything here: 2. is the nearest equivalent.
# The DKMS path is tests/board/install.sh.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/scripts/common.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/build-env.XXXXXX")
trap 'rm -rf "$T"' EXIT
KDIR=${KDIR:-$CACHE/kernel}
[ -f "$KDIR/.config" ] || die "no test kernel at $KDIR (make kernel)"
rel=$(cat "$KDIR/include/config/kernel.release")
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
V=${LLVM_SUFFIX#-}
PREFIX=/usr/lib/llvm-$V/bin/
[ -x "${PREFIX}llvm-config" ] || die "no LLVM $V in $PREFIX (make setup)"
want_lib=$("${PREFIX}llvm-config" --libdir)

# unversioned links to the LLVM tools (clang, ld.lld, llvm-ar, llvm-config, ...)
L="$T/llvm-unversioned"
mkdir -p "$L"
for t in "$PREFIX"*; do ln -s "$t" "$L/$(basename "$t")"; done
# no dpkg: Debian's rust-src cannot be found
mkdir -p "$T/nodpkg"
printf '#!/bin/sh\nexit 1\n' > "$T/nodpkg/dpkg"
# a rustc reporting a sysroot of our own (the real one for everything else)
real_rustc=$(PATH="$(toolchain_path):$PATH" command -v rustc)
mkdir -p "$T/bin"
cat > "$T/bin/rustc" <<EOF
#!/bin/sh
case " \$* " in
*" --print sysroot "* | *" --print=sysroot "*) echo "\$FAKE_SYSROOT"; exit 0 ;;
esac
exec "$real_rustc" "\$@"
EOF
chmod +x "$T/nodpkg/dpkg" "$T/bin/rustc"
debian_lib=$( { dpkg -L rust-src 2>/dev/null; dpkg -L rust-web-src 2>/dev/null; } |
    grep -E '/library$' | head -1 || true)
[ -d "$debian_lib" ] || die "Debian's rust-src is not installed (make setup)"
mkdir -p "$T/sysroot/lib/rustlib/src/rust" "$T/sysroot-nosrc/lib"
ln -s "$debian_lib" "$T/sysroot/lib/rustlib/src/rust/library"

# --- 1. LLVM -> LIBCLANG_PATH --------------------------------------------------
for form in 1 "$LLVM_SUFFIX" "$PREFIX"; do
    got=$(env -u LIBCLANG_PATH PATH="$L:$PATH" LLVM="$form" bash -c '. "$1/scripts/common.sh"; kbuild_env; echo "$LIBCLANG_PATH"' build-env "$TOP" 2>&1) || true
    [ "$got" = "$want_lib" ] && ok "LLVM=$form: LIBCLANG_PATH=$got" || bad "LLVM=$form: LIBCLANG_PATH '$got', expected $want_lib"
done

# --- 2. rustup's layout, LLVM=1 -----------------------------------------------
s=$SECONDS
envA=(env -u RUST_LIB_SRC -u LIBCLANG_PATH PATH="$T/nodpkg:$L:$PATH" FAKE_SYSROOT="$T/sysroot" RUSTC="$T/bin/rustc")
got=$("${envA[@]}" bash -c '. "$1/scripts/common.sh"; find_rust_lib_src' build-env "$TOP")
[ "$got" = "$T/sysroot/lib/rustlib/src/rust/library" ] && ok "rustup's layout found without Debian's package: $got" ||
    bad "find_rust_lib_src with rustup's layout: '$got'"
if "${envA[@]}" LLVM=1 KDIR="$KDIR" MODDIR="$T/modA" "$TOP/scripts/build-module.sh" > "$T/a.log" 2>&1; then
    ko="$T/modA/meson_mx_sdhc_rs.ko"
    vm=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
    [ "$vm" = "$rel" ] && ok "LLVM=1 + rustup's layout: built, vermagic $vm ($((SECONDS - s)) s)" || bad "vermagic '$vm', expected $rel"
    grep -q "LLVM=1 (LIBCLANG_PATH=$want_lib), RUST_LIB_SRC=$T/sysroot/lib/rustlib/src/rust/library" "$T/a.log" &&
        ok "the build used LIBCLANG_PATH=$want_lib and RUST_LIB_SRC from rustup's layout" ||
        { bad "the build's LLVM/RUST_LIB_SRC line:"; grep 'LLVM=' "$T/a.log" | sed 's/^/    /'; }
    c=$(readelf -p .comment "$ko" 2>/dev/null | grep -o 'clang version [0-9]*' | sort -u | tr '\n' ' ')
    [ "$c" = "clang version $V " ] && ok "C objects built by the unversioned links: $c" || bad ".comment: '$c'"
else
    bad "LLVM=1 + rustup's layout: the build failed:"; tail -30 "$T/a.log" | sed 's/^/    /'
fi

# --- 3. no Rust library sources at all, LLVM=DIR/ ------------------------------
s=$SECONDS
envB=(env -u RUST_LIB_SRC -u LIBCLANG_PATH PATH="$T/nodpkg:$PATH" FAKE_SYSROOT="$T/sysroot-nosrc" RUSTC="$T/bin/rustc")
if "${envB[@]}" bash -c '. "$1/scripts/common.sh"; rust_lib_src' build-env "$TOP" > "$T/r.out" 2>&1; then
    bad "rust_lib_src found sources where there are none: $(cat "$T/r.out")"
else
    grep -q "rust-src component ($T/sysroot-nosrc/lib/rustlib/src/rust/library) nor Debian's rust-src package" "$T/r.out" &&
        ok "a kernel build stops: $(cat "$T/r.out")" || bad "rust_lib_src's message: $(cat "$T/r.out")"
fi
if "${envB[@]}" LLVM="$PREFIX" KDIR="$KDIR" MODDIR="$T/modB" "$TOP/scripts/build-module.sh" > "$T/b.log" 2>&1; then
    grep -q "RUST_LIB_SRC=(none)" "$T/b.log" && ok "no rust-src anywhere, LLVM=$PREFIX: built without RUST_LIB_SRC ($((SECONDS - s)) s)" ||
        bad "no RUST_LIB_SRC: the build's line: $(grep 'LLVM=' "$T/b.log")"
else
    bad "no rust-src anywhere: the build failed:"; tail -30 "$T/b.log" | sed 's/^/    /'
fi

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: LLVM=1/-N/DIR/, rustup's layout and no rust-src"
