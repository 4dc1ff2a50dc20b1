#!/usr/bin/env bash
# scripts/check-board-config --initramfs on small initramfs archives made here
# with cpio (run-all: host-initramfs-check; no board, a few seconds):
#
#   accepted: lib/modules/<release>/updates/meson_mx_sdhc_rs.ko with its
#   dependency, modules.dep, conf/modules and the modprobe.d file, as
#   initramfs-tools lays them out: gzip, zstd, xz, lzma and uncompressed; after
#   an uncompressed early (microcode) archive padded with zeros; behind a
#   U-Boot uInitrd header (mkimage -T ramdisk's 64 bytes, written here); the
#   module as .ko.xz;
#   refused (exit 1, the message naming what is missing): the same archives
#   without the module (also behind the uInitrd header and after an early
#   archive), without its dependency, with a modules.dep that lacks it, with
#   nothing that loads it, a file that is no initramfs, parameters the
#   module refuses (conf/modules or a modprobe.d options line: a
#   bounce_size out of range, max_segs over 256, a name it lacks), a module whose
#   vermagic names another release, one whose vermagic names the release but
#   another configuration of it (preempt) than the kernel's own module in the
#   initramfs, and a module for another release than
#   the one the initramfs is for (its name initrd.img-<release>, or
#   --release);
#   crafted archives (the check runs as root): a member with an absolute
#   name is unpacked inside the check's folder, not at that name; a member
#   with ".." in its path and one under a member that is a symbolic link
#   to a folder outside are refused, also when the names hold a newline or
#   " -> " (what cpio -tv prints between a link and its target); a member
#   etc/modprobe.d/x.conf that is a link to /proc/kmsg, or to a FIFO
#   outside, or that is a FIFO itself, is ignored, not read (the check does
#   not hang); nothing is written outside the folder;
#   --module meson_mx_sdio_rs (the root on the SD card): accepted with the SD
#   card slot's module, conf/modules line and modprobe.d file (its blacklist
#   of meson_mx_sdio reported), refused for the SDHC's initramfs above.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CBC="$TOP/scripts/check-board-config"
T=$(mktemp -d "${TMPDIR:-/tmp}/initramfs-check.XXXXXX")
trap 'rm -rf "$T"' EXIT
command -v cpio >/dev/null || { echo "initramfs-check: cpio missing (make setup)"; exit 1; }
REL=7.3.0-board
NL=$'\n'
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }

# tree NAME [what to leave out...]: an initramfs-tools-like tree in $T/NAME
tree() {
    local d="$T/$1"; shift
    local m="$d/usr/lib/modules/$REL"
    mkdir -p "$d/usr/bin" "$d/conf" "$d/etc/modprobe.d" "$m/updates" "$m/kernel/drivers/mmc/core" "$d/scripts"
    ln -s usr/lib "$d/lib"; ln -s usr/bin "$d/bin"
    echo '#!/bin/sh' > "$d/init"; echo 'busybox' > "$d/usr/bin/busybox"
    printf 'ELF-module meson_mx_sdhc_rs\0vermagic=%s SMP mod_unload ARMv7 p2v8 \0' "$REL" > "$m/updates/meson_mx_sdhc_rs.ko"
    printf 'ELF-module pwrseq_emmc\0vermagic=%s SMP mod_unload ARMv7 p2v8 \0' "$REL" > "$m/kernel/drivers/mmc/core/pwrseq_emmc.ko"
    printf 'kernel/drivers/mmc/core/pwrseq_emmc.ko:\nupdates/meson_mx_sdhc_rs.ko: kernel/drivers/mmc/core/pwrseq_emmc.ko\n' > "$m/modules.dep"
    printf 'alias of:N*T*Camlogic,meson-mx-sdhcC* meson_mx_sdhc_rs\n' > "$m/modules.alias"
    printf 'meson_mx_sdhc_rs bounce_size=131072\n' > "$d/conf/modules"
    cp "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$d/etc/modprobe.d/"
    local x
    for x in "$@"; do
        case "$x" in
        module) rm "$m/updates/meson_mx_sdhc_rs.ko" ;;
        dep) rm "$m/kernel/drivers/mmc/core/pwrseq_emmc.ko" ;;
        depline) sed -i '/^updates/d' "$m/modules.dep" ;;
        loader) rm "$d/conf/modules"; sed -i '/meson_mx_sdhc_rs$/d' "$m/modules.alias" ;;
        blacklist) rm "$d/etc/modprobe.d/meson_mx_sdhc_rs.conf" ;;
        badsize) printf 'meson_mx_sdhc_rs bounce_size=12345\n' > "$d/conf/modules" ;;
        badsegs) printf 'options meson_mx_sdhc_rs max_segs=300 sdio_irq=1\n' >> "$d/etc/modprobe.d/meson_mx_sdhc_rs.conf" ;;
        badname) printf 'options meson_mx_sdhc_rs bounce_sizes=4096\n' >> "$d/etc/modprobe.d/meson_mx_sdhc_rs.conf" ;;
        badpair) printf 'meson_mx_sdhc_rs bounce_size=524288\n' > "$d/conf/modules" ;;
        goodpair) printf 'meson_mx_sdhc_rs bounce_size=524288 max_dma_size=524288\n' > "$d/conf/modules" ;;
        oldbuild) printf 'ELF-module meson_mx_sdhc_rs\0vermagic=7.2.0-old SMP mod_unload ARMv7 p2v8 \0' > "$m/updates/meson_mx_sdhc_rs.ko" ;;
        otherconfig) printf 'ELF-module meson_mx_sdhc_rs\0vermagic=%s SMP preempt mod_unload ARMv7 p2v8 \0' "$REL" > "$m/updates/meson_mx_sdhc_rs.ko" ;;
        xz) xz "$m/updates/meson_mx_sdhc_rs.ko"
            sed -i 's,updates/meson_mx_sdhc_rs.ko:,updates/meson_mx_sdhc_rs.ko.xz:,' "$m/modules.dep" ;;
        esac
    done
}
cpio_of() { (cd "$T/$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0); }
early() { # an early archive as Debian's: uncompressed, 512-byte blocks
    mkdir -p "$T/early/kernel/x86/microcode"
    head -c 3000 /dev/urandom > "$T/early/kernel/x86/microcode/GenuineIntel.bin"
    (cd "$T/early" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0)
}
uinitrd() { # FILE: mkimage -A arm -O linux -T ramdisk -C none's header, then FILE
    local n; n=$(wc -c < "$1")
    printf '\047\005\031\126\0\0\0\0\0\0\0\0'
    printf "\\$(printf %03o $((n >> 24 & 255)))\\$(printf %03o $((n >> 16 & 255)))\\$(printf %03o $((n >> 8 & 255)))\\$(printf %03o $((n & 255)))"
    printf '\0\0\0\0\0\0\0\0\0\0\0\0\005\002\003\000'
    printf 'initramfs test' ; head -c 18 /dev/zero
    cat "$1"
}

# expect NAME accept|refuse [REGEX]: run the check on $T/NAME.img (or $T/NAME)
expect() {
    local name=$1 want=$2 re=${3:-} rc=0
    local img="$T/$name.img"
    [ -f "$img" ] || img="$T/$name"
    timeout 60 "$CBC" --initramfs "$img" > "$T/$name.out" 2>&1 < /dev/null || rc=$?
    if [ "$want" = accept ] && [ "$rc" = 0 ] && grep -q '^result: the initramfs loads meson_mx_sdhc_rs' "$T/$name.out" &&
       { [ -z "$re" ] || grep -qE -- "$re" "$T/$name.out"; }; then
        ok "$name: accepted"
    elif [ "$want" = refuse ] && [ "$rc" = 1 ] && grep -q '^result: REFUSED' "$T/$name.out" &&
         { [ -z "$re" ] || grep -qE -- "$re" "$T/$name.out"; }; then
        ok "$name: refused: $(grep -m1 MISSING "$T/$name.out" | sed 's/^ *MISSING *//' | cut -c1-110)"
    else
        bad "$name: expected $want${re:+ with /$re/}, status $rc:"; sed 's/^/    /' "$T/$name.out"
    fi
}

start=$SECONDS
tree good; tree nomod module; tree nodep dep; tree nodepline depline; tree noload loader
tree noblacklist blacklist; tree xzmod xz; tree oldbuild oldbuild; tree otherconfig otherconfig
tree badsize badsize; tree badsegs badsegs; tree badname badname; tree badpair badpair
tree goodpair goodpair
cpio_of good | gzip > "$T/good-gzip.img"
cpio_of good | zstd -q > "$T/good-zstd.img"
cpio_of good | xz -C crc32 > "$T/good-xz.img"
cpio_of good | lzma > "$T/good-lzma.img"
cpio_of good > "$T/good-cpio.img"
{ early; cpio_of good | gzip; } > "$T/good-early.img"
{ early; early; cpio_of good | zstd -q; } > "$T/good-early2-zstd.img"
{ early; cpio_of good; } > "$T/good-early-cpio.img"
uinitrd "$T/good-early.img" > "$T/good-uinitrd.img"
cpio_of xzmod | gzip > "$T/ko-xz.img"
cpio_of noblacklist | gzip > "$T/no-blacklist.img"
cpio_of nomod | gzip > "$T/no-module.img"
{ early; cpio_of nomod | gzip; } > "$T/no-module-early.img"
uinitrd "$T/no-module-early.img" > "$T/no-module-uinitrd.img"
cpio_of nodep | gzip > "$T/no-dependency.img"
cpio_of nodepline | gzip > "$T/no-depline.img"
cpio_of noload | gzip > "$T/nothing-loads.img"
cpio_of oldbuild | gzip > "$T/old-build.img"
cpio_of otherconfig | gzip > "$T/other-config.img"
for x in badsize badsegs badname badpair goodpair; do cpio_of $x | gzip > "$T/param-$x.img"; done
cp "$T/good-gzip.img" "$T/initrd.img-$REL"; cp "$T/good-gzip.img" "$T/initrd.img-7.3.1-other"
head -c 4096 /dev/urandom > "$T/garbage.img"; printf '\0\0\0\0' | dd of="$T/garbage.img" conv=notrunc 2>/dev/null

expect good-gzip accept 'gzip-compressed cpio'
expect good-zstd accept 'zstd-compressed cpio'
expect good-xz accept 'xz-compressed cpio'
expect good-lzma accept 'lzma-compressed cpio'
expect good-cpio accept 'segment 1 at byte 0: uncompressed cpio'
expect good-early accept 'segment 2 at byte [0-9]+: gzip-compressed'
expect good-early2-zstd accept 'segment 3 at byte [0-9]+: zstd-compressed'
expect good-early-cpio accept 'segment 2 at byte [0-9]+: uncompressed cpio'
expect good-uinitrd accept 'U-Boot image header .*name .initramfs test'
expect ko-xz accept 'meson_mx_sdhc_rs\.ko\.xz'
expect no-blacklist accept "NOTE +no modprobe.d file with 'blacklist meson_mx_sdhc'"
grep -q "ok .*etc/modprobe.d/meson_mx_sdhc_rs.conf: blacklist meson_mx_sdhc" "$T/good-gzip.out" &&
    ok "the modprobe.d blacklist is found" || bad "good-gzip: the modprobe.d blacklist is not reported"
expect no-module refuse "MISSING +no lib/modules/<release>/.../meson_mx_sdhc_rs.ko in the initramfs \(releases in it: $REL"
expect no-module-early refuse 'no lib/modules/<release>'
expect no-module-uinitrd refuse 'no lib/modules/<release>'
expect no-dependency refuse 'MISSING +  dependency kernel/drivers/mmc/core/pwrseq_emmc.ko is not in the initramfs'
expect no-depline refuse "MISSING +  modules.dep of $REL has no line for updates/meson_mx_sdhc_rs.ko"
expect nothing-loads refuse 'MISSING +nothing in the initramfs loads it'
expect garbage refuse 'neither a cpio archive nor'
grep -q "ok .*conf/modules: bounce_size=131072" "$T/good-gzip.out" && ok "good-gzip: conf/modules' bounce_size=131072 taken" ||
    bad "good-gzip: the parameters are not checked"
expect param-badsize refuse "MISSING +conf/modules: bounce_size=12345 is not 0 or a power of two"
expect param-badpair refuse "MISSING +bounce_size=524288 is above max_dma_size=131072"
expect param-goodpair accept "ok .*conf/modules: max_dma_size=524288"
expect param-badsegs refuse "MISSING +etc/modprobe.d/meson_mx_sdhc_rs.conf: max_segs=300 is not from 1 to 256"
expect param-badname refuse "MISSING +etc/modprobe.d/meson_mx_sdhc_rs.conf: bounce_sizes=4096 is no such parameter"
expect old-build refuse "MISSING +  built for 7.2.0-old .*installed for $REL"
grep -q "ok .*built for $REL" "$T/good-gzip.out" && ok "good-gzip: the module's vermagic names $REL" ||
    bad "good-gzip: no vermagic check"
expect other-config refuse "MISSING +  vermagic '$REL SMP preempt mod_unload ARMv7 p2v8 ', but pwrseq_emmc.ko of the same release has"
grep -q "ok .*vermagic the same as pwrseq_emmc.ko's" "$T/good-gzip.out" && ok "good-gzip: the vermagic is the kernel's (pwrseq_emmc.ko's)" ||
    bad "good-gzip: the vermagic is not compared with the kernel's modules"
# the release the initramfs is for, from its name or --release
expect "initrd.img-$REL" accept "built for $REL"
expect initrd.img-7.3.1-other refuse "MISSING +no meson_mx_sdhc_rs.ko for release 7.3.1-other"
rc=0; "$CBC" --initramfs "$T/good-gzip.img" --release 7.3.1-other > "$T/rel.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q 'for release 7.3.0-board, not 7.3.1-other' "$T/rel.out" &&
    ok "--release 7.3.1-other: refused, the module is for $REL" || { bad "--release: status $rc"; cat "$T/rel.out"; }

# crafted archives: the good tree, three folders down from $T (so that
# "../../../../" from the check's folder, $T/tmp/check-initramfs.*/s1/x, is
# $T too), plus members aimed outside: an absolute name, a ".." path, and a
# file under a member that is a link to a folder outside, both matching the
# names the check unpacks (etc/modprobe.d/lnk, then
# etc/modprobe.d/lnk/modprobe.d/z.conf: "lnQ" in the tree, renamed "lnk" in
# the archive)
C=$T/d1/d2/d3/crafted
mkdir -p "$T/d1/d2/d3" "$T/tmp" "$T/out-abs/etc/modprobe.d" "$T/out-dotdot/modprobe.d" "$T/out-link"
cp -a "$T/good" "$C"
mkdir -p "$C/etc/modprobe.d/lnQ/modprobe.d"
ln -s "$T/out-link" "$C/etc/modprobe.d/lnk"
for f in "$T/out-abs/etc/modprobe.d/x.conf" "$T/out-dotdot/modprobe.d/y.conf" "$C/etc/modprobe.d/lnQ/modprobe.d/z.conf"; do
    echo 'install meson_mx_sdhc /bin/sh -c "echo run as root"' > "$f"
done
crafted() { # NAME EXTRA-MEMBER...: $T/NAME.img, gzip
    local n=$1; shift
    (cd "$C" && { find . -path ./etc/modprobe.d/lnQ -prune -o -path ./etc/modprobe.d/lnk -prune -o -print | LC_ALL=C sort
                  printf '%s\n' "$@"; } | cpio -o -H newc --quiet -R 0:0 2>/dev/null) |
        LC_ALL=C sed 's,modprobe.d/lnQ,modprobe.d/lnk,g' | gzip > "$T/$n.img"
}
crafted crafted-absolute "$T/out-abs/etc/modprobe.d/x.conf"
crafted crafted-dotdot ../../../../out-dotdot/modprobe.d/y.conf
crafted crafted-link ./etc/modprobe.d/lnk ./etc/modprobe.d/lnQ ./etc/modprobe.d/lnQ/modprobe.d ./etc/modprobe.d/lnQ/modprobe.d/z.conf
rm "$T/out-abs/etc/modprobe.d/x.conf" "$T/out-dotdot/modprobe.d/y.conf"
gzip -dc "$T/crafted-absolute.img" | cpio -t 2>/dev/null | grep -qx "$T/out-abs/etc/modprobe.d/x.conf" &&
    gzip -dc "$T/crafted-dotdot.img" | cpio -t 2>/dev/null | grep -qx '../../../../out-dotdot/modprobe.d/y.conf' &&
    gzip -dc "$T/crafted-link.img" | cpio -t 2>/dev/null | grep -qx 'etc/modprobe.d/lnk/modprobe.d/z.conf' ||
    bad "the crafted archives do not hold the crafted names"
export TMPDIR=$T/tmp
expect crafted-absolute accept 'gzip-compressed cpio'
expect crafted-dotdot refuse 'member \.\./\.\./\.\./\.\./out-dotdot/modprobe.d/y.conf: a \.\. in its path'
expect crafted-link refuse 'member etc/modprobe.d/lnk/modprobe.d/z.conf: under etc/modprobe.d/lnk, a symbolic link in the archive'
# newc members written here (NAME MODE TARGET-OR-DATA), before the good
# tree's archive, gzip: names cpio -tv prints on two lines or with a " -> "
newc() { # NAME MODE DATA ...: a newc archive with these members and its trailer
    perl -e 'my $i = 100; my $o = "";
        sub ent { my ($n, $m, $d) = @_; $n .= "\0";
            my $h = "070701" . join("", map { sprintf "%08X", $_ } ($i++, $m, 0, 0, 1, 0, length $d, 0, 0, 0, 0, length $n, 0)) . $n;
            $h .= "\0" x ((4 - length($h) % 4) % 4); $h .= $d; $h .= "\0" x ((4 - length($h) % 4) % 4); return $h; }
        while (@ARGV) { my ($n, $m, $d) = splice @ARGV, 0, 3; $o .= ent($n, oct $m, $d); }
        $o .= ent("TRAILER!!!", 0, ""); $o .= "\0" x ((512 - length($o) % 512) % 512); print $o;' "$@"
}
mkdir -p "$T/out-nl" "$T/out-arrow"; mkfifo "$T/fifo"
linked() { # NAME NEWC-ARGS...: $T/NAME.img: those members, then the good tree
    { newc "${@:2}"; cpio_of good; } | gzip > "$T/$1.img"
}
install='install mmc_block /bin/sh -c "echo run as root"'
linked crafted-newline "A${NL}modprobe.d" 040755 '' "A${NL}modprobe.d/L" 0120777 "$T/out-nl" "A${NL}modprobe.d/L/evil.conf" 0100644 "$install"
linked crafted-arrow 'E -> x' 040755 '' 'E -> x/modprobe.d' 040755 '' 'E -> x/modprobe.d/L' 0120777 "$T/out-arrow" \
    'E -> x/modprobe.d/L/evil.conf' 0100644 "$install"
linked link-kmsg etc 040755 '' etc/modprobe.d 040755 '' etc/modprobe.d/x.conf 0120777 /proc/kmsg
linked link-fifo etc 040755 '' etc/modprobe.d 040755 '' etc/modprobe.d/x.conf 0120777 "$T/fifo"
linked member-fifo etc 040755 '' etc/modprobe.d 040755 '' etc/modprobe.d/x.conf 010644 ''
expect crafted-newline refuse 'member A\\x0amodprobe.d/L/evil.conf: under A\\x0amodprobe.d/L, a symbolic link in the archive'
expect crafted-arrow refuse 'member E -> x/modprobe.d/L/evil.conf: under E -> x/modprobe.d/L, a symbolic link in the archive'
expect link-kmsg accept 'result: the initramfs loads'
expect link-fifo accept 'result: the initramfs loads'
expect member-fifo accept 'result: the initramfs loads'
# the SD card slot's module, for the root on the SD card
m="$T/good/usr/lib/modules/$REL"
printf 'ELF-module meson_mx_sdio_rs\0vermagic=%s SMP mod_unload ARMv7 p2v8 \0' "$REL" > "$m/updates/meson_mx_sdio_rs.ko"
echo 'updates/meson_mx_sdio_rs.ko:' >> "$m/modules.dep"
echo 'meson_mx_sdio_rs max_segs=64' >> "$T/good/conf/modules"
cp "$TOP/contrib/modprobe.d/meson_mx_sdio_rs.conf" "$T/good/etc/modprobe.d/"
cpio_of good | gzip > "$T/sd-slot.img"
rc=0
timeout 60 "$CBC" --initramfs "$T/sd-slot.img" --release "$REL" --module meson_mx_sdio_rs > "$T/sd-slot.out" 2>&1 < /dev/null || rc=$?
[ "$rc" = 0 ] && grep -q '^result: the initramfs loads meson_mx_sdio_rs' "$T/sd-slot.out" &&
    grep -q 'etc/modprobe.d/meson_mx_sdio_rs.conf: blacklist meson_mx_sdio ' "$T/sd-slot.out" &&
    ok "sd-slot: --module meson_mx_sdio_rs accepted, the blacklist of meson_mx_sdio reported" ||
    { bad "sd-slot: --module meson_mx_sdio_rs, status $rc:"; sed 's/^/    /' "$T/sd-slot.out"; }
rc=0
timeout 60 "$CBC" --initramfs "$T/good-gzip.img" --release "$REL" --module meson_mx_sdio_rs > "$T/sd-none.out" 2>&1 < /dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'MISSING .*no lib/modules/<release>/.../meson_mx_sdio_rs.ko in the initramfs' "$T/sd-none.out" &&
    ok "sd-slot: the SDHC's initramfs refused for --module meson_mx_sdio_rs" ||
    { bad "sd-slot: the SDHC's initramfs with --module meson_mx_sdio_rs, status $rc:"; sed 's/^/    /' "$T/sd-none.out"; }
unset TMPDIR
left=$(find "$T/out-abs" "$T/out-dotdot" "$T/out-link" -type f; find "$T/out-nl" "$T/out-arrow" -mindepth 1)
[ -z "$left" ] && ok "the crafted archives wrote nothing outside the check's folder" ||
    bad "the crafted archives wrote outside the check's folder: $left"
echo "($((SECONDS - start)) s)"
[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: initramfs-check"
