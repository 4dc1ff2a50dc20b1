#!/usr/bin/env bash
# The board kit's installer (scripts/board-kit-install, the kit's `install`)
# and its uInitrd hook (contrib/kernel/zz-meson-sdhc-uinitrd) against fake
# roots (run-all: host-board-kit-install; no board, no kernel build): a kit
# folder laid out as `make board-kit` lays it out, with a kernel package
# made here with dpkg-deb (a 9 MiB "zImage", larger than the 8 MiB the old
# boot.ini left before the DTB), fake modules carrying a vermagic, and
# stubs first on PATH for dpkg (-i: dpkg-deb -x into the root; -r: the
# kernel package's files and its initramfs removed), depmod
# (modules.dep), update-initramfs (a gzip cpio from the root's modules,
# /etc/initramfs-tools/modules and modprobe.d, then the post-update.d hooks,
# as initramfs-tools does; -u alone: the newest release with an initramfs;
# STUB_DROP_MODULE=1 leaves the Rust module out),
# mkimage (the 64-byte legacy header, type kernel or ramdisk) and apt-get.
# The real check-board-config --initramfs judges the initramfs.
#
#   refused, the boot configuration byte for byte as it was: no first
#   contact (--first-contact), one that failed, ran under another kernel or
#   with another module; no boot.ini,
#   extlinux.conf or boot.scr, armbianEnv.txt without boot.scr, an extlinux.conf that
#   u-boot-update (u-boot-menu) rewrites, a boot.ini whose kernel
#   is missing, an extlinux.conf without a LABEL, a module built for another
#   release, a module (the SDHC's or the SD card slot's) whose vermagic differs from the kernel's modules', a
#   kernel without the C driver, a previous entry that boots the kit's own
#   release, a running command line that names the root by device
#   (/dev/mmcblk0p2), a root UUID that two file systems carry (a stub
#   blkid), an initramfs without the module (boot.ini and extlinux; and
#   --undo then removes what was installed); a second install;
#   boot.ini: the kit's entry in front, the previous lines unchanged after
#   it, the DTB's and uInitrd's load addresses past the uImage's end, the
#   command line the running one's (its console=ttyS0 as ttyAML0) plus
#   initcall_blacklist=, uImage,
#   uInitrd and DTB in the FAT folder; a boot.ini that loads with ext4load
#   from /boot/ gets its lines the same way; a later update-initramfs that drops
#   the module is refused by the hook, which keeps the uInitrd that works;
#   without mkimage on PATH, apt-get install u-boot-tools first;
#   a system hook run with the kernel's installation that rewrites a file
#   the fallback loads: the file put back;
#   the kernel package as scripts/board-kit-deb makes it: u-boot-tools among
#   its dependencies, the uInitrd hook in it (install does not add its own);
#   boot.scr (Armbian's OneCloud): refused when it is not its boot.cmd
#   compiled or no script image; the kit's entry in front of boot.cmd,
#   compiled into boot.scr, the previous script after it unchanged, the
#   files loaded with fatload ${bootdev} and bootm only when all three
#   loaded; a system hook (99-uboot) that moves the kit's uInitrd over
#   /boot/uInitrd: put back at install and at a later update-initramfs for
#   the kit's release, saved anew after one for the system's own kernel;
#   --undo: boot.cmd and boot.scr byte for byte, the kit's kernel package
#   removed (dpkg -r), and a later update-initramfs -u (apt's trigger) makes
#   the system's kernel's uInitrd, not the kit's, which 99-uboot would move
#   over /boot/uInitrd; --undo under the kit's kernel (ROOT/proc's
#   osrelease): its package kept, its initramfs removed, dpkg -r named for
#   after the reboot;
#   refused too: a first contact in read mode (no write verified), one whose
#   read-backs were bad, one in file mode whose file system check found
#   errors or that has no check (no "fsck" field), one that passed with
#   warnings, one whose read comparison was skipped (--read-size 0), one
#   whose pattern sizes stop short of max_req_size or 2 x max_req_size +
#   1536 (a small --file-size), one with no "backup" field (one with
#   "none (--no-backup)", from a card that was blank then), one on another card than the SDHC's (switch-driver
#   disk, a stub; the card's name and size under sys/block); --rescue on a
#   system whose root is on the SDHC's card; a boot partition whose UUID
#   another file system carries (fstab's UUID= or LABEL=); a boot.ini line
#   over 510 bytes (HardKernel's U-Boot reads 512 with the line's end); a
#   /boot without room for the kernel, the initramfs, uImage and uInitrd (a df
#   stub); Armbian's C1 boot.ini (ext4load || fatload) on a FAT /boot: the
#   kit's lines with fatload; under a vendor kernel (no mainline SDHC), the
#   eMMC found as the one MMC card;
#   --help lists the checks made on the first contact's JSON;
#   --undo: boot.ini as before, /etc/initramfs-tools/modules as before, the
#   post-update.d hook, KIT and the kit's boot files gone;
#   KIT (scripts/board-kit --kit-file): REPORT_URL from origin's https
#   address, none for one carrying a token, an ssh one or no origin,
#   BOARD_KIT_REPORT_URL first, one a shell would expand refused; install
#   puts KIT in /etc/meson-mx-sdhc-rs and prints REPORT_URL, board-report
#   prints it;
#   the DTB to install (the kit's, --dtb) against the DT first contact ran
#   under (the JSON's dt_ fields, fdtget on DTBs made with dtc): refused
#   with HS200 where first contact had none and the other way round,
#   another max-frequency, no bus-width against 8, no SDHC node, a JSON
#   without the dt_ fields, no fdtget; taken when they match;
#   --no-first-contact alone or with another word: refused;
#   --no-first-contact=I-ACCEPT-UNVERIFIED-WRITES: installs, with a warning;
#   extlinux.conf: DEFAULT kit-rust, its LABEL with the initramfs and the
#   DTB, the previous LABEL kept, TIMEOUT at least 3 s; --undo restores it and
#   removes the dtb-<release> folder install made.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/board-kit-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
for t in dpkg-deb cpio gzip perl dtc fdtget; do command -v "$t" > /dev/null || { echo "board-kit-install: $t missing"; exit 1; }; done
REL=7.3.4-sdhc-kit
# the address the test kits' KIT records for reports (BOARD_KIT_REPORT_URL; example.org: no real one)
REPORT_URL=https://git.example.org/meson_mx_sdhc_rs
VM="$REL SMP mod_unload ARMv7 p2v8 "
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
start=$SECONDS

# --- stubs ----------------------------------------------------------------------------
S="$T/bin"; mkdir -p "$S"
cat > "$S/dpkg" <<'EOF'
#!/bin/sh
echo "dpkg $*" >> "$STUB_LOG"
[ "$1" = -i ] && exec dpkg-deb -x "$2" "$ROOT/"
if [ "$1" = -r ]; then
    # a kernel package's files, and its initramfs (initramfs-tools' postrm.d)
    rel=${2#linux-image-}
    rm -rf "$ROOT/boot/vmlinuz-$rel" "$ROOT/boot/initrd.img-$rel" "$ROOT/lib/modules/$rel" "$ROOT/etc/kernel/postinst.d/zz-meson-sdhc-uinitrd"
fi
exit 0
EOF
cat > "$S/depmod" <<'EOF'
#!/bin/sh
echo "depmod $*" >> "$STUB_LOG"
for rel; do :; done
d="$ROOT/lib/modules/$rel"
(cd "$d" && find kernel updates -name '*.ko' 2>/dev/null | sort | sed 's/$/:/') > "$d/modules.dep"
EOF
cat > "$S/update-initramfs" <<'EOF'
#!/bin/sh
set -e
echo "update-initramfs $*" >> "$STUB_LOG"
rel=$3
# -u alone: the newest kernel that has an initramfs, as initramfs-tools takes it
[ "$*" != -u ] || rel=$(ls "$ROOT/boot" | sed -n 's/^initrd\.img-//p' | sort -V | tail -n 1)
w=$(mktemp -d)
m="$w/usr/lib/modules/$rel"
mkdir -p "$m" "$w/conf" "$w/etc"
cp -r "$ROOT/lib/modules/$rel/kernel" "$m/"
[ "${STUB_DROP_MODULE:-0}" = 1 ] || cp -r "$ROOT/lib/modules/$rel/updates" "$m/"
cp "$ROOT/lib/modules/$rel/modules.dep" "$m/"
grep -v '^#' "$ROOT/etc/initramfs-tools/modules" > "$w/conf/modules" || true
cp -r "$ROOT/etc/modprobe.d" "$w/etc/" 2>/dev/null || true
ln -s usr/lib "$w/lib"
(cd "$w" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip > "$ROOT/boot/initrd.img-$rel"
rm -rf "$w"
for h in "$ROOT"/etc/initramfs/post-update.d/*; do
    [ -x "$h" ] && "$h" "$rel" "/boot/initrd.img-$rel"
done
exit 0
EOF
cat > "$S/mkimage" <<'EOF'
#!/bin/sh
echo "mkimage $*" >> "$STUB_LOG"
type="" in=""
while [ $# -gt 1 ]; do
    case "$1" in -T) type=$2; shift ;; -d) in=$2; shift ;; -A|-O|-C|-a|-e|-n) shift ;; esac
    shift
done
case "$type" in kernel) t='\002' ;; ramdisk) t='\003' ;; script) t='\006' ;; *) exit 1 ;; esac
n=$(wc -c < "$in")
{ printf '\047\005\031\126'; head -c 24 /dev/zero; printf '\005\002'; printf "$t"; printf '\000'
  head -c 32 /dev/zero
  if [ "$type" = script ]; then
      printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((n >> 24 & 255)) $((n >> 16 & 255)) $((n >> 8 & 255)) $((n & 255)))"
      head -c 4 /dev/zero
  fi
  cat "$in"; } > "$1"
EOF
cat > "$S/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >> "$STUB_LOG"
EOF
# switch-driver disk: the SDHC's card
printf '#!/bin/sh\n[ "$1" = disk ] && echo /dev/mmcblk1\n' > "$T/switch-driver-stub"
chmod +x "$S"/* "$T/switch-driver-stub"
export PATH="$S:$PATH" STUB_LOG="$T/stub.log" SWITCH_DRIVER="$T/switch-driver-stub"

# --- the kit (as make board-kit lays it out) ------------------------------------------
ko() { printf 'ELF-module %s\0vermagic=%s\0' "$1" "$2"; }
# mkdtb FILE [PROPERTIES|none]: a DTB (dtc, 30000 bytes) whose SDHC node, at DT_NODE, has
# PROPERTIES (default: the kit's, HS200 at 100 MHz on 8 bits); "none": no such node
DT_NODE=/soc/bus@c1100000/mmc@8e00
mkdtb() {
    local props=${2:-'max-frequency = <100000000>; bus-width = <8>; mmc-hs200-1_8v;'} node
    node="bus@c1100000 { mmc@8e00 { compatible = \"amlogic,meson-mx-sdhc\"; $props }; };"
    [ "$props" != none ] || node="bus@c1100000 { mmc@8000 { }; };"
    printf '/dts-v1/;\n/ { model = "test"; soc { %s }; };\n' "$node" | dtc -q -I dts -O dtb -S 30000 -o "$1" -
}
kit() { # DIR BOARD DTB [module-vermagic] [config line]
    local k=$1 p="$T/pkg-$RANDOM"
    mkdir -p "$k/boot" "$k/sbin" "$k/etc/modprobe.d" "$k/etc/initramfs-tools/hooks" "$k/etc/kernel/postinst.d" \
        "$k/lib/modules/$REL/kernel/drivers/mmc/core" "$p/DEBIAN" "$p/boot" "$p/lib/modules/$REL/kernel/drivers/mmc/core"
    BOARD_KIT_REPORT_URL=$REPORT_URL "$TOP/scripts/board-kit" --kit-file "$2" "$REL" "$3" "$VM" > "$k/KIT"
    cp "$TOP/scripts/board-kit-install" "$k/install"
    cp "$TOP/scripts/check-board-config" "$TOP/scripts/switch-driver" "$k/sbin/"
    cp "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$k/etc/modprobe.d/"
    cp "$TOP/contrib/initramfs-tools/hooks/meson_mx_sdhc_rs" "$k/etc/initramfs-tools/hooks/"
    cp "$TOP/contrib/kernel/zz-meson-sdhc-uinitrd" "$k/etc/kernel/postinst.d/"
    ko meson_mx_sdhc_rs "${4:-$VM}" > "$k/meson_mx_sdhc_rs.ko"
    ko meson_mx_sdio_rs "${SD_VM:-${4:-$VM}}" > "$k/meson_mx_sdio_rs.ko"
    ko pwrseq_emmc "$VM" > "$k/lib/modules/$REL/kernel/drivers/mmc/core/pwrseq_emmc.ko"
    cp "$k/lib/modules/$REL/kernel/drivers/mmc/core/pwrseq_emmc.ko" "$p/lib/modules/$REL/kernel/drivers/mmc/core/"
    mkdtb "$k/boot/$3"
    printf 'CONFIG_RUST=y\n%s\n' "${5:-$(printf 'CONFIG_MMC_MESON_MX_SDHC=y\nCONFIG_MMC_MESON_MX_SDIO=y')}" > "$k/boot/config-$REL"
    cp "$k/boot/config-$REL" "$p/boot/"
    head -c $((9 * 1048576)) /dev/zero > "$p/boot/vmlinuz-$REL"
    printf 'Package: linux-image-%s\nVersion: 7.3.4-1\nArchitecture: armhf\nMaintainer: test <t@t>\nDescription: test\n' "$REL" > "$p/DEBIAN/control"
    dpkg-deb -Znone --build "$p" "$p.deb" > /dev/null
    "$TOP/scripts/board-kit-deb" "$p.deb" "$k/linux-image-${REL}_7.3.4-1_armhf.deb" "$TOP/contrib/kernel/zz-meson-sdhc-uinitrd"
    rm -rf "$p" "$p.deb"
}
BOOTINI='ODROIDC-UBOOT-CONFIG
setenv bootargs "console=ttyS0,115200n8 root=UUID=1234 rootwait ro"
fatload mmc 0:1 0x00208000 uImage
fatload mmc 0:1 0x21800000 meson8b_odroidc.dtb
bootm 0x00208000 - 0x21800000'
EXTLINUX='MENU TITLE boot
TIMEOUT 10
DEFAULT debian
LABEL debian
    LINUX /boot/vmlinuz-6.1.0-armmp
    INITRD /boot/initrd.img-6.1.0-armmp
    APPEND console=ttyAML0,115200 root=UUID=1234 rootwait ro'
# a boot script in the shape of Armbian's OneCloud boot.cmd (the U-Boot sets bootdev and
# runs boot.scr from the FAT partition, mounted at /boot)
BOOTCMD='# boot.cmd: compile with mkimage -C none -A arm -T script -d boot.cmd boot.scr
if test -n "${bootdev}"; test $? != 0; then echo "bootdev not set"; exit 22; fi
fatload ${bootdev} 0x20800000 /armbianEnv.txt && env import -t 0x20800000 ${filesize}
setenv bootargs "root=${rootdev} rootwait rw ${consoleargs}"
fatload ${bootdev} 0x20800000 /uImage || exit 1
fatload ${bootdev} 0x22000000 /uInitrd || exit 1
fatload ${bootdev} 0x21800000 /dtb/meson8b-onecloud.dtb || exit 1
bootm 0x20800000 0x22000000 0x21800000'
root() { # DIR boot.ini|extlinux|armbian|armbianenv|none
    local r=$1
    mkdir -p "$r/proc" "$r/boot" "$r/etc/initramfs-tools" "$r/media/boot"
    echo 'console=ttyS0,115200 root=UUID=1234 rootwait ro BOOT_IMAGE=/boot/x' > "$r/proc/cmdline"
    # the SDHC's card, as switch-driver disk names it (the stub: /dev/mmcblk1)
    mkdir -p "$r/sys/block/mmcblk1/device"; echo 8GTF4R > "$r/sys/block/mmcblk1/device/name"; echo 15269888 > "$r/sys/block/mmcblk1/size"
    printf '# modules for the initramfs\nloop\n' > "$r/etc/initramfs-tools/modules"
    case "$2" in
    boot.ini) echo "$BOOTINI" > "$r/media/boot/boot.ini"; echo k > "$r/media/boot/uImage"; echo d > "$r/media/boot/meson8b_odroidc.dtb" ;;
    extlinux) mkdir -p "$r/boot/extlinux"; echo "$EXTLINUX" > "$r/boot/extlinux/extlinux.conf"; echo k > "$r/boot/vmlinuz-6.1.0-armmp" ;;
    armbianenv) echo 'extraargs=' > "$r/boot/armbianEnv.txt" ;;
    armbian) printf 'rootdev=UUID=1234\n' > "$r/boot/armbianEnv.txt"; echo "$BOOTCMD" > "$r/boot/boot.cmd"
        mkimage -C none -A arm -T script -d "$r/boot/boot.cmd" "$r/boot/boot.scr"
        mkdir -p "$r/boot/dtb"; echo k > "$r/boot/uImage"; echo i > "$r/boot/uInitrd"; echo d > "$r/boot/dtb/meson8b-onecloud.dtb"
        echo 'root=UUID=1234 rootwait rw console=ttyAML0,115200n8 no_console_suspend consoleblank=0' > "$r/proc/cmdline" ;;
    esac
}
# fc_json KIT FILE [RESULT] [KERNEL]: a first-contact --json for KIT's module, as first-contact
# writes it (the fields install reads)
# [MODE] [RUST_READ_BACK] [CARD_NAME] [FSCK] [FSCK_STATUS]: FSCK "none" leaves the fsck fields out;
# FC_READ (read_compare's result, default same), FC_SIZES (patterns.sizes, default 512 up to
# 2 x 131072 + 1536), FC_BACKUP (the backup line's value; "omit": no backup line) from the
# environment; FC_DT_NODE, FC_DT_MAXF, FC_DT_HS200, FC_DT_BW the dt_ fields (default: the kit's
# DTB's; FC_DT=omit: none, as an older first-contact wrote it)
fc_json() {
    local fsck="" backup=${FC_BACKUP:-'{"file": "emmc.img.gz", "verified": "same-as-card"}'}
    [ "${8:-}" = none ] ||
        fsck=$(printf ' "fsck": "%s",\n "fsck_command": "e2fsck -fn /dev/mmcblk1p2",\n "fsck_status": %s,\n "fsck_summary": "mmcblk1p2: 11/2816 files (0.0%% non-contiguous), 2592/11264 blocks",' \
            "${8:-clean}" "${9:-0}")
    [ "$backup" = omit ] && backup="" || backup=" \"backup\": $backup,"
    local dt
    dt=$(printf ' "dt_node": "%s",\n "dt_max_frequency": %s,\n "dt_hs200_1_8v": %s,\n "dt_bus_width": %s,' \
        "${FC_DT_NODE:-$DT_NODE}" "${FC_DT_MAXF:-100000000}" "${FC_DT_HS200:-true}" "${FC_DT_BW:-8}")
    [ "${FC_DT:-}" != omit ] || dt=""
    printf '{\n "tool": "first-contact",\n "result": "%s",\n "mode": "%s",\n "rust_driver_version": "meson_mx_sdhc_rs md5 %s for %s",\n "max_req_size": 131072,\n "kernel": "%s",\n "card_type": "MMC",\n "card_name": "%s",\n "device_bytes": 7818182656,\n%s\n "read_compare": {"offset": 0, "size": 7818182656, "result": "%s", "digest_c": "x", "digest_rust": "x"},\n "patterns": {"offset": null, "bytes": 4194304, "file_system": "/dev/mmcblk1p2", "sizes": [%s], "buffer_offsets": [512, 1536, 3584], "rust_read_back": "%s", "c_read_back": "ok", "reads_compared": "same"},\n "ios": %s,\n%s\n%s\n "save_file": null\n}\n' \
        "${3:-pass}" "${5:-file}" "$(md5sum < "$1/meson_mx_sdhc_rs.ko" | cut -d' ' -f1)" "$REL" "${4:-$REL}" "${7:-8GTF4R}" "$backup" \
        "${FC_READ:-same}" "${FC_SIZES:-512, 1536, 3584, 4096, 4608, 32256, 65024, 130560, 131072, 263680}" "${6:-ok}" \
        "${FC_IOS:-{\"timing\": \"mmc HS200\", \"clock_hz\": 94444445, \"actual_clock_hz\": 94444445, \"bus_width\": 8, \"signal_voltage\": \"1.80 V\"\}}" \
        "$fsck" "$dt" > "$2"
}
# run NAME KIT ROOT [args]: the installer, its output in $T/NAME.out, its status in $rc; a
# passing first contact for KIT's module given unless FC_ARGS says otherwise
run() {
    local n=$1 k=$2 r=$3; shift 3
    fc_json "$k" "$T/fc-$n.json"
    local fc=(--first-contact "$T/fc-$n.json")
    if [ "${FC_ARGS+set}" = set ]; then read -r -a fc <<< "$FC_ARGS"; fi
    rc=0
    ROOT=$r timeout 120 "$k/install" "${fc[@]}" "$@" > "$T/$n.out" 2>&1 < /dev/null || rc=$?
}
refused() { # NAME WHAT REGEX CONF ORIGINAL
    if [ "$rc" = 1 ] && grep -q 'REFUSED' "$T/$1.out" && grep -qE -- "$3" "$T/$1.out" &&
       { [ -z "$4" ] || [ "$(cat "$4")" = "$5" ]; }; then
        ok "$2: refused: $(grep -m1 REFUSED "$T/$1.out" | sed 's/^install: REFUSED: //' | cut -c1-120)"
    else
        bad "$2: expected a refusal matching /$3/, status $rc:"; sed 's/^/    | /' "$T/$1.out"
    fi
}

# scr_root DIR: Armbian's OneCloud (boot.scr), with its post-update.d/99-uboot on a FAT
# /boot: the newest initramfs made into /boot/uInitrd-RELEASE, then moved over
# /boot/uInitrd (no symbolic links on FAT)
scr_root() {
    root "$1" armbian
    mkdir -p "$1/etc/initramfs/post-update.d" "$1/lib/modules/6.6.0-armbian/kernel" "$1/lib/modules/6.6.0-armbian/updates"
    : > "$1/lib/modules/6.6.0-armbian/modules.dep"
    printf '#!/bin/sh\necho "uinitrd of $1" > "$ROOT/boot/uInitrd-$1"\nmv "$ROOT/boot/uInitrd-$1" "$ROOT/boot/uInitrd"\n' > "$1/etc/initramfs/post-update.d/99-uboot"
    chmod +x "$1/etc/initramfs/post-update.d/99-uboot"
}

kit "$T/kit" odroidc1 meson8b-odroidc1.dtb
kit "$T/kit-onecloud" onecloud meson8b-onecloud.dtb
# KIT_SCRIPTS_OUT=DIR (tests/host/uboot-script.sh, which runs them): only the boot.ini and
# the boot.cmd that install writes on the fake roots r-ini and r-scr below, copied there
if [ -n "${KIT_SCRIPTS_OUT:-}" ]; then
    root "$T/r-ini" boot.ini
    run ini "$T/kit" "$T/r-ini"
    [ "$rc" = 0 ] && cp "$T/r-ini/media/boot/boot.ini" "$KIT_SCRIPTS_OUT/boot.ini" || { sed 's/^/    | /' "$T/ini.out"; exit 1; }
    scr_root "$T/r-scr"
    run scr "$T/kit-onecloud" "$T/r-scr"
    [ "$rc" = 0 ] && cp "$T/r-scr/boot/boot.cmd" "$KIT_SCRIPTS_OUT/boot.cmd" || { sed 's/^/    | /' "$T/scr.out"; exit 1; }
    echo "board-kit-install: boot.ini and boot.cmd in $KIT_SCRIPTS_OUT ($((SECONDS - start))s)"
    exit 0
fi
kit "$T/kit-otherrel" odroidc1 meson8b-odroidc1.dtb "7.3.0-other SMP mod_unload ARMv7 p2v8 "
kit "$T/kit-preempt" odroidc1 meson8b-odroidc1.dtb "$REL SMP preempt mod_unload ARMv7 p2v8 "
kit "$T/kit-noc" odroidc1 meson8b-odroidc1.dtb "" "# CONFIG_MMC_MESON_MX_SDHC is not set"
SD_VM="$REL SMP preempt mod_unload ARMv7 p2v8 " kit "$T/kit-sdpreempt" odroidc1 meson8b-odroidc1.dtb

# --- --help: the checks on the first contact's JSON, as the owner reads them on the board -----
"$T/kit/install" --help > "$T/help.out" 2>&1 || true
miss=""
for w in '"pass"' pass-with-warnings rust_driver_version 'raw or file' rust_read_back read_compare max_req_size '2 x max_req_size + 1536' \
    'fsck: clean' card_name device_bytes 'none (--no-backup)' ios; do
    grep -qF -- "$w" "$T/help.out" || miss="$miss '$w'"
done
[ -z "$miss" ] && ok "--help lists the first contact checks (result, kernel and module, mode, read-backs, read comparison, sizes, fsck, card, backup)" ||
    bad "--help does not name:$miss"

# --- KIT: the address reports go to (scripts/board-kit --kit-file, as make board-kit writes it) ---
G="$T/git"; git init -q "$G"
kitfile() { # ORIGIN|none [BOARD_KIT_REPORT_URL]: KIT's REPORT_URL line, or FAILED
    git -C "$G" remote remove origin 2>/dev/null || true
    [ "$1" = none ] || git -C "$G" remote add origin "$1"
    GIT_DIR="$G/.git" BOARD_KIT_REPORT_URL=${2:-} "$TOP/scripts/board-kit" --kit-file odroidc1 "$REL" meson8b-odroidc1.dtb "$VM" 2> "$T/kitfile.err" |
        grep '^REPORT_URL=' || echo FAILED
}
kf_bad=""
[ "$(kitfile https://git.example.org/o/meson_mx_sdhc_rs.git)" = 'REPORT_URL="https://git.example.org/o/meson_mx_sdhc_rs.git"' ] || kf_bad="$kf_bad https-origin"
[ "$(kitfile https://user:token@git.example.org/o/r.git)" = 'REPORT_URL=""' ] && grep -q 'user name or token' "$T/kitfile.err" || kf_bad="$kf_bad token-origin"
[ "$(kitfile git@git.example.org:o/r.git)" = 'REPORT_URL=""' ] && grep -q 'not an http(s) address' "$T/kitfile.err" || kf_bad="$kf_bad ssh-origin"
[ "$(kitfile none)" = 'REPORT_URL=""' ] && grep -q 'no git remote origin' "$T/kitfile.err" || kf_bad="$kf_bad no-origin"
[ "$(kitfile git@git.example.org:o/r.git "$REPORT_URL")" = "REPORT_URL=\"$REPORT_URL\"" ] || kf_bad="$kf_bad variable"
[ "$(kitfile none 'https://x.example.org/$(id)')" = FAILED ] || kf_bad="$kf_bad variable-with-\$"
grep -qx "REPORT_URL=\"$REPORT_URL\"" "$T/kit/KIT" || kf_bad="$kf_bad kit"
[ -z "$kf_bad" ] && ok "KIT's REPORT_URL: origin's https address, none for one with a token, an ssh one or none, BOARD_KIT_REPORT_URL first, one with \$ refused" ||
    bad "KIT's REPORT_URL:$kf_bad"

# --- refusals before anything is installed ---------------------------------------------
root "$T/r-none" none
run none "$T/kit" "$T/r-none"; refused none "no boot configuration" 'no fallback entry possible' "" ""
root "$T/r-armbian" armbianenv
run armbian "$T/kit" "$T/r-armbian"; refused armbian "armbianEnv.txt without boot.scr" 'armbianEnv.txt but no /boot/boot.scr' "" ""
root "$T/r-scrdiff" armbian; echo "# edited after compiling" >> "$T/r-scrdiff/boot/boot.cmd"
scrdiff=$(cat "$T/r-scrdiff/boot/boot.cmd")
run scrdiff "$T/kit-onecloud" "$T/r-scrdiff"; refused scrdiff "a boot.scr that is not its boot.cmd compiled" 'is not /boot/boot.cmd compiled' \
    "$T/r-scrdiff/boot/boot.cmd" "$scrdiff"
root "$T/r-scrbad" armbian; echo "not an image" > "$T/r-scrbad/boot/boot.scr"
run scrbad "$T/kit-onecloud" "$T/r-scrbad"; refused scrbad "a boot.scr that is no script image" 'not a U-Boot script image' \
    "$T/r-scrbad/boot/boot.cmd" "$BOOTCMD"
root "$T/r-nokernel" boot.ini; rm "$T/r-nokernel/media/boot/uImage"
run nokernel "$T/kit" "$T/r-nokernel"; refused nokernel "boot.ini's kernel missing" 'loads uImage, which is not in' \
    "$T/r-nokernel/media/boot/boot.ini" "$BOOTINI"
root "$T/r-nolabel" extlinux; sed -i '/LABEL/d' "$T/r-nolabel/boot/extlinux/extlinux.conf"
run nolabel "$T/kit" "$T/r-nolabel"; refused nolabel "extlinux.conf without a LABEL" 'has no LABEL' "" ""
root "$T/r-otherrel" boot.ini
run otherrel "$T/kit-otherrel" "$T/r-otherrel"; refused otherrel "module built for another release" 'built for 7\.3\.0-other' \
    "$T/r-otherrel/media/boot/boot.ini" "$BOOTINI"
root "$T/r-preempt" boot.ini
run preempt "$T/kit-preempt" "$T/r-preempt"; refused preempt "module vermagic not the kernel's" "vermagic .*preempt.* is not the kit kernel's" \
    "$T/r-preempt/media/boot/boot.ini" "$BOOTINI"
root "$T/r-sdpreempt" boot.ini
run sdpreempt "$T/kit-sdpreempt" "$T/r-sdpreempt"; refused sdpreempt "the SD card slot's module's vermagic not the kernel's" \
    "meson_mx_sdio_rs.ko's vermagic .*preempt.* is not the kit kernel's" "$T/r-sdpreempt/media/boot/boot.ini" "$BOOTINI"
root "$T/r-noc" boot.ini
run noc "$T/kit-noc" "$T/r-noc"; refused noc "kernel without the C driver" 'has no C driver' "$T/r-noc/media/boot/boot.ini" "$BOOTINI"
root "$T/r-same" boot.ini; sed -i "s/ uImage\$/ uImage-$REL/" "$T/r-same/media/boot/boot.ini"; mv "$T/r-same/media/boot/uImage" "$T/r-same/media/boot/uImage-$REL"
run same "$T/kit" "$T/r-same"; refused same "the fallback boots the kit's own release" "boots uImage-$REL, the kit's own release" "" ""
if grep -q '^dpkg' "$T/stub.log" 2>/dev/null; then bad "a refusal above installed the kernel package"; else ok "none of these ran dpkg"; fi

# --- the module missing from the initramfs -----------------------------------------------
root "$T/r-drop" boot.ini
STUB_DROP_MODULE=1 run drop "$T/kit" "$T/r-drop"
refused drop "initramfs without the module" 'update-initramfs -c .* failed|would not load' "$T/r-drop/media/boot/boot.ini" "$BOOTINI"
grep -q 'no lib/modules/<release>/.../meson_mx_sdhc_rs.ko in the initramfs' "$T/drop.out" &&
    ok "  the refusal shows check-board-config's finding" || bad "  check-board-config's finding not shown"
run drop-undo "$T/kit" "$T/r-drop" --undo
if [ "$rc" = 0 ] && [ "$(cat "$T/r-drop/media/boot/boot.ini")" = "$BOOTINI" ] &&
   [ ! -e "$T/r-drop/etc/initramfs/post-update.d/zz-meson-sdhc-uinitrd" ] &&
   [ "$(cat "$T/r-drop/etc/initramfs-tools/modules")" = "$(printf '# modules for the initramfs\nloop')" ]; then
    ok "--undo after the refusal: the hooks and the modules line gone, boot.ini as it was"
else bad "--undo after the refusal (status $rc)"; sed 's/^/    | /' "$T/drop-undo.out"; fi

root "$T/r-devroot" boot.ini; echo 'console=ttyS0,115200n8 root=/dev/mmcblk0p2 rootwait' > "$T/r-devroot/proc/cmdline"
run devroot "$T/kit" "$T/r-devroot"; refused devroot "the running root named by device" 'root=/dev/mmcblk0p2.*root=UUID' \
    "$T/r-devroot/media/boot/boot.ini" "$BOOTINI"
root "$T/r-dupuuid" boot.ini
mkdir -p "$T/bin-dup"
printf '#!/bin/sh\necho "blkid $*" >> "$STUB_LOG"\nprintf "/dev/mmcblk0p2\\n/dev/mmcblk1p2\\n"\n' > "$T/bin-dup/blkid"
chmod +x "$T/bin-dup/blkid"
PATH="$T/bin-dup:$PATH" run dupuuid "$T/kit" "$T/r-dupuuid"; refused dupuuid "a root UUID two file systems carry" 'root=UUID=1234 names 2 file systems' \
    "$T/r-dupuuid/media/boot/boot.ini" "$BOOTINI"
# first contact: none, failed, under another kernel, with another module; the override
root "$T/r-nofc" boot.ini
FC_ARGS="" run nofc "$T/kit" "$T/r-nofc"; refused nofc "no first contact on record" 'no --first-contact FILE' \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-failed.json" fail
FC_ARGS="--first-contact $T/fc-failed.json" run fcfail "$T/kit" "$T/r-nofc"; refused fcfail "a first contact that failed" 'first contact did not pass' \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-otherk.json" pass 6.1.0-armmp
FC_ARGS="--first-contact $T/fc-otherk.json" run fcotherk "$T/kit" "$T/r-nofc"; refused fcotherk "a first contact under another kernel" 'ran under linux .6\.1\.0-armmp.' \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit-preempt" "$T/fc-othermod.json"
FC_ARGS="--first-contact $T/fc-othermod.json" run fcothermod "$T/kit" "$T/r-nofc"; refused fcothermod "a first contact with another module" 'ran with another module' \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-read.json" pass "" read
FC_ARGS="--first-contact $T/fc-read.json" run fcread "$T/kit" "$T/r-nofc"; refused fcread "a first contact that wrote nothing (read mode)" "mode 'read'.*no write" \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-rbad.json" pass "" file bad
FC_ARGS="--first-contact $T/fc-rbad.json" run fcrbad "$T/kit" "$T/r-nofc"; refused fcrbad "a first contact whose Rust read-back was bad" "writes were not verified" \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-fsck.json" pass "" file ok "" errors 4
FC_ARGS="--first-contact $T/fc-fsck.json" run fcfsck "$T/kit" "$T/r-nofc"; refused fcfsck "a first contact whose file system check found errors" \
    "file system check was not clean .*fsck 'errors', command 'e2fsck -fn /dev/mmcblk1p2', status '4'" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-nofsck.json" pass "" file ok "" none
FC_ARGS="--first-contact $T/fc-nofsck.json" run fcnofsck "$T/kit" "$T/r-nofc"; refused fcnofsck "a first contact in file mode without a file system check" \
    "file system check was not clean .*fsck ''" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-othercard.json" pass "" file ok 4FTE4R
FC_ARGS="--first-contact $T/fc-othercard.json" run fcothercard "$T/kit" "$T/r-nofc"; refused fcothercard "a first contact on another card" "ran on 4FTE4R.*8GTF4R" \
    "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
FC_READ=skipped fc_json "$T/kit" "$T/fc-noread.json"
FC_ARGS="--first-contact $T/fc-noread.json" run fcnoread "$T/kit" "$T/r-nofc"; refused fcnoread "a first contact without its read comparison (--read-size 0)" \
    "read comparison did not find the same data .*result 'skipped'.*without --read-size 0" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
# a JSON without the read comparison's object: refused, not a silent exit
grep -v '"read_compare"' "$T/fc-noread.json" > "$T/fc-norc.json"
FC_ARGS="--first-contact $T/fc-norc.json" run fcnorc "$T/kit" "$T/r-nofc"; refused fcnorc "a first contact JSON without read_compare" \
    "read comparison did not find the same data through both drivers.*read_compare result ''" "" ""
FC_SIZES="512, 1536, 3584, 4096" fc_json "$T/kit" "$T/fc-small.json"
FC_ARGS="--first-contact $T/fc-small.json" run fcsmall "$T/kit" "$T/r-nofc"; refused fcsmall "a first contact whose patterns stopped below max_req_size (--file-size 4k)" \
    "did not reach the host's largest request .*max_req_size '131072', sizes \[512 1536 3584 4096\]; needed: 131072 and 263680.*run it again with the defaults" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
FC_SIZES="512, 131072" fc_json "$T/kit" "$T/fc-nobeyond.json"
FC_ARGS="--first-contact $T/fc-nobeyond.json" run fcnobeyond "$T/kit" "$T/r-nofc"; refused fcnobeyond "a first contact without the size past max_req_size" \
    "did not reach the host's largest request" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
fc_json "$T/kit" "$T/fc-warn.json" pass-with-warnings
FC_ARGS="--first-contact $T/fc-warn.json" run fcwarn "$T/kit" "$T/r-nofc"; refused fcwarn "a first contact that passed with warnings (errors recovered, kernel warnings)" \
    "result 'pass-with-warnings'.*report the run" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
FC_BACKUP=omit fc_json "$T/kit" "$T/fc-nobackup.json"
FC_ARGS="--first-contact $T/fc-nobackup.json" run fcnobackup "$T/kit" "$T/r-nofc"; refused fcnobackup "a first contact JSON with no backup field" \
    "records no backup" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
for arg in --no-first-contact --no-first-contact=yes; do
    FC_ARGS="$arg" run nofcbare "$T/kit" "$T/r-nofc"; refused nofcbare "$arg (not the exact override)" \
        "is not taken: without a first contact on record.*--no-first-contact=I-ACCEPT-UNVERIFIED-WRITES" "$T/r-nofc/media/boot/boot.ini" "$BOOTINI"
done
root "$T/r-nofc-ok" boot.ini
FC_ARGS="--no-first-contact=I-ACCEPT-UNVERIFIED-WRITES" run nofcok "$T/kit" "$T/r-nofc-ok"
[ "$rc" = 0 ] && grep -q 'WARNING: --no-first-contact=I-ACCEPT-UNVERIFIED-WRITES: no first contact on record' "$T/nofcok.out" &&
    ok "--no-first-contact=I-ACCEPT-UNVERIFIED-WRITES: installs, with a warning" || { bad "--no-first-contact=I-ACCEPT-UNVERIFIED-WRITES (status $rc)"; sed 's/^/    | /' "$T/nofcok.out"; }

# a hook of the system's that changes what the fallback loads (as Armbian's 99-uboot does)
root "$T/r-hook" boot.ini
mkdir -p "$T/r-hook/etc/initramfs/post-update.d"
printf '#!/bin/sh\necho changed > "$ROOT/media/boot/uImage"\n' > "$T/r-hook/etc/initramfs/post-update.d/99-uboot"
chmod +x "$T/r-hook/etc/initramfs/post-update.d/99-uboot"
run hook "$T/kit" "$T/r-hook"
if [ "$rc" = 0 ] && grep -q '/media/boot/uImage changed .*put back' "$T/hook.out" &&
   [ "$(cat "$T/r-hook/media/boot/uImage")" = k ]; then
    ok "a system hook that rewrote the fallback's uImage during the install: put back"
else bad "fallback file changed by a hook (status $rc, uImage '$(cat "$T/r-hook/media/boot/uImage")')"; sed 's/^/    | /' "$T/hook.out"; fi
rc=0; ROOT="$T/r-hook" "$T/kit/install" --undo > "$T/hook-undo.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ ! -e "$T/r-hook/etc/meson-mx-sdhc-rs/fallback" ] && ok "--undo removes the saved fallback files" ||
    { bad "--undo after the hook case (status $rc)"; sed 's/^/    | /' "$T/hook-undo.out"; }
root "$T/r-ubm" extlinux
printf '## /boot/extlinux/extlinux.conf\n##\n## Do not edit this file manually, use: u-boot-update\n%s\n' "$EXTLINUX" > "$T/r-ubm/boot/extlinux/extlinux.conf"
ubm=$(cat "$T/r-ubm/boot/extlinux/extlinux.conf")
run ubm "$T/kit-onecloud" "$T/r-ubm"; refused ubm "extlinux.conf written by u-boot-update" 'u-boot-menu' \
    "$T/r-ubm/boot/extlinux/extlinux.conf" "$ubm"
root "$T/r-extdrop" extlinux
STUB_DROP_MODULE=1 run extdrop "$T/kit-onecloud" "$T/r-extdrop"
refused extdrop "extlinux: initramfs without the module" 'REFUSED' "$T/r-extdrop/boot/extlinux/extlinux.conf" "$EXTLINUX"

# --- boot.ini: the switch ------------------------------------------------------------------
R="$T/r-ini"; root "$R" boot.ini
: > "$STUB_LOG"
run ini "$T/kit" "$R"
B="$R/media/boot"
if [ "$rc" = 0 ]; then ok "boot.ini install: status 0 ($(grep -c . "$T/ini.out") lines)"; else bad "boot.ini install: status $rc"; sed 's/^/    | /' "$T/ini.out"; fi
[ -f "$R/lib/modules/$REL/updates/meson_mx_sdio_rs.ko" ] && cmp -s "$T/kit/meson_mx_sdio_rs.ko" "$R/lib/modules/$REL/updates/meson_mx_sdio_rs.ko" &&
    grep -q '^updates/meson_mx_sdio_rs\.ko:' "$R/lib/modules/$REL/modules.dep" &&
    ok "the SD card slot's module installed into updates/ and indexed by depmod" ||
    bad "the SD card slot's module: not in /lib/modules/$REL/updates or not in modules.dep"
grep -q 'first contact passed .*: file mode, writes of up to 263680 bytes read back through both drivers, its file system checked clean (e2fsck -fn /dev/mmcblk1p2), the card read through both the same, under the Rust driver at mmc HS200, 94444445 Hz; the copy of the card (emmc.img.gz) checked before its first write' "$T/ini.out" &&
    ok "the file-mode first contact taken with its clean file system check named" || bad "first contact's file system check not named: $(grep 'first contact' "$T/ini.out")"
new=$(cat "$B/boot.ini")
[ "$(echo "$new" | head -n 1)" = ODROIDC-UBOOT-CONFIG ] && ok "boot.ini starts with ODROIDC-UBOOT-CONFIG" || bad "boot.ini header: $(echo "$new" | head -n 1)"
[ "$(echo "$new" | sed -n '/^# <<< the kit/,$p' | tail -n +2)" = "$(echo "$BOOTINI" | tail -n +2)" ] &&
    ok "the previous commands follow the kit's entry unchanged (the fallback)" || { bad "the previous commands changed:"; echo "$new" | sed 's/^/    | /'; }
[ "$(cat "$B/boot.ini.before-kit")" = "$BOOTINI" ] && ok "boot.ini.before-kit is the previous boot.ini" || bad "boot.ini.before-kit"
bm=$(echo "$new" | sed -n 's/^if test "${kit_ok}" = "1"; then bootm \(0x[0-9a-f]*\) \(0x[0-9a-f]*\) \(0x[0-9a-f]*\); fi$/\1 \2 \3/p')
read -r ka ia da <<< "$bm"
usz=$(wc -c < "$B/uImage-$REL"); isz=$(wc -c < "$B/uInitrd-kit-$REL" 2>/dev/null || echo 0)
if [ -n "$bm" ] && [ $((ka + usz)) -le $((da)) ] && [ $((da + 30000)) -le $((ia)) ] && [ $((ia + isz)) -le $((0x30000000)) ] &&
   echo "$new" | grep -q "fatload mmc 0:1 $da meson8b-odroidc1-$REL.dtb" && echo "$new" | grep -q "fatload mmc 0:1 $ia uInitrd-kit-$REL"; then
    ok "load addresses: uImage $ka ($usz bytes, over 8 MiB), DTB $da, uInitrd $ia ($isz bytes): none overlaps"
else bad "load addresses: bootm '$bm', uImage $usz bytes, uInitrd $isz"; echo "$new" | sed 's/^/    | /'; fi
echo "$new" | grep -qxF 'if test "${kit_ok}" = "1"; then setenv bootargs "console=ttyAML0,115200 root=UUID=1234 rootwait ro initcall_blacklist=meson_mx_sdhc_driver_init"; fi' &&
    ok "bootargs: the running command line (ttyS0 as ttyAML0, BOOT_IMAGE= dropped) with initcall_blacklist=" || bad "bootargs: $(echo "$new" | grep bootargs | head -1)"
[ -f "$B/meson8b-odroidc1-$REL.dtb" ] && [ -f "$B/uImage-$REL" ] && [ -f "$B/uInitrd-kit-$REL" ] &&
    ok "uImage-$REL, uInitrd-kit-$REL and the DTB in the FAT folder" || bad "boot files: $(ls "$B")"
"$TOP/scripts/check-board-config" --initramfs "$B/uInitrd-kit-$REL" --release "$REL" > "$T/uinitrd.chk" 2>&1 &&
    ok "check-board-config --initramfs on uInitrd-kit-$REL: accepted" || { bad "uInitrd-kit-$REL refused:"; sed 's/^/    | /' "$T/uinitrd.chk"; }
grep -q -- '-T kernel .*vmlinuz' "$STUB_LOG" && grep -q -- '-T ramdisk .*initrd.img' "$STUB_LOG" &&
    ok "mkimage made the uImage and the uInitrd" || bad "mkimage calls: $(grep mkimage "$STUB_LOG")"
grep -q '^apt-get' "$STUB_LOG" && bad "apt-get ran although mkimage is there" || ok "apt-get not run (mkimage there)"
deb=$(ls "$T/kit"/linux-image-*.deb)
dpkg-deb -f "$deb" Depends | grep -q u-boot-tools && dpkg-deb -c "$deb" | grep 'etc/kernel/postinst.d/zz-meson-sdhc-uinitrd$' > /dev/null &&
    ! grep -q 'postinst.d/zz-meson-sdhc-uinitrd' "$R/etc/meson-mx-sdhc-rs/kit-install.state" &&
    cmp -s "$R/etc/kernel/postinst.d/zz-meson-sdhc-uinitrd" "$TOP/contrib/kernel/zz-meson-sdhc-uinitrd" &&
    ok "the kernel package (scripts/board-kit-deb) depends on u-boot-tools and brings the uInitrd hook; install does not add it again" ||
    bad "the kernel package's hook or dependency: $(dpkg-deb -f "$deb" Depends)"
grep -qx meson_mx_sdhc_rs "$R/etc/initramfs-tools/modules" && [ -x "$R/etc/initramfs-tools/hooks/meson_mx_sdhc_rs" ] &&
    [ -x "$R/etc/kernel/postinst.d/zz-meson-sdhc-uinitrd" ] && [ -x "$R/etc/initramfs/post-update.d/zz-meson-sdhc-uinitrd" ] &&
    [ -x "$R/usr/local/sbin/check-board-config" ] && ok "modules line, initramfs hook, uInitrd hooks, scripts installed" ||
    bad "installed files: $(cd "$R" && find etc usr -type f | tr '\n' ' ')"
grep -qx "REPORT_URL=\"$REPORT_URL\"" "$R/etc/meson-mx-sdhc-rs/KIT" && grep -q "reports go to $REPORT_URL (KIT: REPORT_URL)" "$T/ini.out" &&
    ok "the kit's KIT in /etc/meson-mx-sdhc-rs (board-report reads it), its REPORT_URL printed" ||
    { bad "KIT's REPORT_URL not installed or not printed"; tail -n 3 "$T/ini.out" | sed 's/^/    | /'; }
: > "$T/dmesg"
(cd "$T" && MESON_SDHC_TEST_HOOKS=1 BOARD_REPORT_ROOT=$R BOARD_REPORT_DMESG=$T/dmesg "$TOP/scripts/board-report" --output "$T/report.txt") > "$T/report.out" 2>&1 &&
    grep -qx "board-report: send it to: $REPORT_URL (the kit's KIT, REPORT_URL)" "$T/report.out" &&
    ok "board-report on the installed root names KIT's REPORT_URL" || { bad "board-report: no REPORT_URL"; sed 's/^/    | /' "$T/report.out"; }
[ ! -e "$R/etc/modprobe.d/meson_mx_sdhc_rs.conf" ] && ok "no modprobe.d file (the C driver is built in: the command line keeps it off)" ||
    bad "modprobe.d file installed for a built-in C driver"
[ ! -e "$R/etc/modprobe.d/meson_mx_sdio_rs-blacklist.conf" ] &&
    ok "no blacklist of the SD card slot's module (its C driver is built in and binds the slot first)" ||
    bad "meson_mx_sdio_rs blacklisted for a kernel with the SD card slot's C driver built in"
run again "$T/kit" "$R"; refused again "a second install" 'installed already' "$B/boot.ini" "$new"

# a later initramfs without the module: the hook refuses it and keeps the uInitrd that works
cp "$B/uInitrd-kit-$REL" "$T/uinitrd.good"
rc=0; ROOT=$R STUB_DROP_MODULE=1 update-initramfs -u -k "$REL" > "$T/upd.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] && grep -q 'REFUSED: the new uInitrd' "$T/upd.out" && cmp -s "$B/uInitrd-kit-$REL" "$T/uinitrd.good"; then
    ok "update-initramfs without the module: the hook refuses (status $rc), uInitrd-kit-$REL kept"
else bad "the hook on an initramfs without the module: status $rc"; sed 's/^/    | /' "$T/upd.out"; fi

# --undo run under the kit's kernel: its package stays (it runs), its initramfs goes
mkdir -p "$R/proc/sys/kernel"; echo "$REL" > "$R/proc/sys/kernel/osrelease"
: > "$STUB_LOG"
run ini-undo "$T/kit" "$R" --undo
rm -r "$R/proc/sys"
if [ "$rc" = 0 ] && ! grep -q '^dpkg -r' "$STUB_LOG" && [ ! -e "$R/boot/initrd.img-$REL" ] && [ -e "$R/boot/vmlinuz-$REL" ] &&
   grep -q "the kit's kernel runs now: its package stays.*after the reboot into the previous kernel remove it: dpkg -r linux-image-$REL" "$T/ini-undo.out"; then
    ok "--undo under the kit's kernel: its package kept, its initramfs removed, dpkg -r named for after the reboot"
else bad "--undo under the kit's kernel: status $rc, $(grep '^dpkg' "$STUB_LOG" | tr '\n' ' ')"; sed 's/^/    | /' "$T/ini-undo.out"; fi
if [ "$rc" = 0 ] && [ "$(cat "$B/boot.ini")" = "$BOOTINI" ] && [ ! -e "$B/boot.ini.before-kit" ] &&
   [ "$(cat "$R/etc/initramfs-tools/modules")" = "$(printf '# modules for the initramfs\nloop')" ] &&
   [ ! -e "$R/etc/initramfs/post-update.d/zz-meson-sdhc-uinitrd" ] && [ ! -e "$R/etc/initramfs-tools/hooks/meson_mx_sdhc_rs" ] &&
   [ ! -e "$B/uInitrd-kit-$REL" ] && [ ! -e "$B/uImage-$REL" ] && [ -e "$B/uImage" ] && [ ! -e "$R/etc/meson-mx-sdhc-rs/KIT" ] &&
   [ ! -e "$R/lib/modules/$REL/updates/meson_mx_sdio_rs.ko" ]; then
    ok "--undo: boot.ini and the modules file as before, the hooks, KIT, the kit's boot files and the SD card slot's module gone"
else bad "--undo: status $rc"; sed 's/^/    | /' "$T/ini-undo.out"; ls "$B"; fi
run undo-again "$T/kit" "$R" --undo
[ "$rc" = 1 ] && grep -q 'nothing to undo' "$T/undo-again.out" && ok "a second --undo: nothing to undo" || bad "second --undo: status $rc"

# --- a boot.ini that loads from the root file system (ext4load /boot/...), no mkimage ------
# mkimage missing: apt-get install u-boot-tools first (PATH without it)
N="$T/nomk"; mkdir -p "$N/stubs" "$N/bin" "$N/sbin"
for f in "$S"/*; do [ "${f##*/}" = mkimage ] || cp "$f" "$N/stubs/"; done
ln -s /usr/bin/* "$N/bin/"; ln -s /usr/sbin/* "$N/sbin/"; rm -f "$N/bin/mkimage" "$N/sbin/mkimage"
cat > "$N/stubs/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >> "\$STUB_LOG"
[ "\$*" = "install -y u-boot-tools" ] && cp "$S/mkimage" "$N/stubs/mkimage"
EOF
chmod +x "$N/stubs/apt-get"
R="$T/r-ext4"; root "$R" none
printf 'ODROIDC-UBOOT-CONFIG\nsetenv bootargs "root=UUID=1234"\next4load mmc 0:2 0x21000000 /boot/uImage\nbootm 0x21000000\n' > "$R/boot/boot.ini"
echo k > "$R/boot/uImage"
: > "$STUB_LOG"
PATH="$N/stubs:$N/bin:$N/sbin" run ext4 "$T/kit" "$R"
if [ "$rc" = 0 ] && grep -q "then ext4load mmc 0:2 0x21000000 /boot/uImage-$REL && " "$R/boot/boot.ini" &&
   grep -q "ext4load mmc 0:2 0x[0-9a-f]* /boot/meson8b-odroidc1-$REL.dtb" "$R/boot/boot.ini" && [ -f "$R/boot/uInitrd-kit-$REL" ]; then
    ok "boot.ini with ext4load /boot/...: the kit's lines load the same way (ext4load mmc 0:2 /boot/uImage-$REL)"
else bad "ext4load boot.ini: status $rc"; sed 's/^/    | /' "$T/ext4.out" "$R/boot/boot.ini"; fi
grep -qx 'apt-get install -y u-boot-tools' "$STUB_LOG" && ok "without mkimage: apt-get install -y u-boot-tools first" ||
    { bad "without mkimage: no apt-get install u-boot-tools"; sed 's/^/    | /' "$STUB_LOG"; }

# --- a step that fails inside a function (put: /usr/local/sbin a file, not a folder) --------
R="$T/r-putfail"; root "$R" extlinux
mkdir -p "$R/usr/local"; : > "$R/usr/local/sbin"
run putfail "$T/kit-onecloud" "$R"
if [ "$rc" = 1 ] && grep -q 'install: error: the step above failed; the boot configuration was not changed; ./install --undo removes what was installed' "$T/putfail.out" &&
   [ "$(cat "$R/boot/extlinux/extlinux.conf")" = "$EXTLINUX" ]; then
    ok "a step failing inside a function (put): its message, extlinux.conf unchanged"
else bad "a step failing inside put: status $rc"; sed 's/^/    | /' "$T/putfail.out"; fi

# --- extlinux.conf ---------------------------------------------------------------------------
R="$T/r-ext"; root "$R" extlinux
FC_BACKUP='"none (--no-backup)"' run ext-nobackup "$T/kit-onecloud" "$R"
refused ext-nobackup "a first contact run with --no-backup (a card that was blank then)" 'was run with --no-backup, on a card that was blank then' \
    "$R/boot/extlinux/extlinux.conf" "$EXTLINUX"
# a first contact whose ios first-contact could not read ("ios": null) is taken
FC_IOS=null run ext "$T/kit-onecloud" "$R"
E="$R/boot/extlinux/extlinux.conf"
if [ "$rc" = 0 ] && grep -qx 'DEFAULT kit-rust' "$E" && ! grep -qx 'DEFAULT debian' "$E" && grep -qx 'TIMEOUT 30' "$E" &&
   grep -qx "    INITRD /boot/initrd.img-$REL" "$E" && grep -qx "    FDT /boot/dtb-$REL/meson8b-onecloud.dtb" "$E" &&
   [ -f "$R/boot/dtb-$REL/meson8b-onecloud.dtb" ] &&
   grep -qx '    APPEND console=ttyAML0,115200 root=UUID=1234 rootwait ro initcall_blacklist=meson_mx_sdhc_driver_init' "$E" &&
   [ "$(sed -n '/^LABEL debian/,$p' "$E")" = "$(echo "$EXTLINUX" | sed -n '/^LABEL debian/,$p')" ]; then
    ok "extlinux.conf: DEFAULT kit-rust with initramfs and DTB, TIMEOUT 30, LABEL debian kept (the fallback)"
else bad "extlinux install: status $rc"; sed 's/^/    | /' "$T/ext.out" "$E"; fi
run ext-undo "$T/kit-onecloud" "$R" --undo
[ "$rc" = 0 ] && [ "$(cat "$E")" = "$EXTLINUX" ] && [ ! -e "$R/boot/dtb-$REL/meson8b-onecloud.dtb" ] &&
    ok "extlinux --undo: extlinux.conf as before" || { bad "extlinux --undo: status $rc"; sed 's/^/    | /' "$T/ext-undo.out"; }
[ ! -e "$R/boot/dtb-$REL" ] && [ -d "$R/boot/extlinux" ] && ok "extlinux --undo: the dtb-$REL folder install made is gone, /boot/extlinux kept" ||
    bad "extlinux --undo: left $(cd "$R/boot" && find . -type d | tr '\n' ' ')"

# --- boot.scr (Armbian's OneCloud): the switch ---------------------------------------------
# scr_text FILE: the script a script image carries (after the header and the length list)
scr_text() { tail -c +73 "$1" | head -c "$(od -An -tu1 -j64 -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')"; }
R="$T/r-scr"; scr_root "$R"
scr0=$(od -An -tx1 "$R/boot/boot.scr" | md5sum)
: > "$STUB_LOG"
run scr "$T/kit-onecloud" "$R"
B="$R/boot"
if [ "$rc" = 0 ]; then ok "boot.scr install: status 0"; else bad "boot.scr install: status $rc"; sed 's/^/    | /' "$T/scr.out"; fi
new=$(cat "$B/boot.cmd")
[ "$(scr_text "$B/boot.scr")" = "$new" ] && ok "boot.scr carries the new boot.cmd (mkimage -T script)" || bad "boot.scr's script is not boot.cmd"
[ "$(echo "$new" | sed -n '/^# <<< the kit/,$p' | tail -n +2)" = "$BOOTCMD" ] &&
    ok "the previous script follows the kit's entry unchanged (the fallback)" || { bad "the previous script changed:"; echo "$new" | sed 's/^/    | /'; }
[ "$(cat "$B/boot.cmd.before-kit")" = "$BOOTCMD" ] && [ "$(od -An -tx1 "$B/boot.scr.before-kit" | md5sum)" = "$scr0" ] &&
    ok "boot.cmd.before-kit and boot.scr.before-kit are the previous ones" || bad "the .before-kit copies"
loads=$(echo "$new" | sed -n 's/^if test "${kit_rust}" = "1"; then \(.*\) \&\& setenv kit_ok "1"; fi$/\1/p')
bm="$(echo "$new" | sed -n 's/^if test "${kit_ok}" = "1"; then bootm \(0x[0-9a-f]*\) \(0x[0-9a-f]*\) \(0x[0-9a-f]*\); fi$/\1 \2 \3/p')|$(echo "$new" | sed -n 's/^if test "${kit_ok}" = "1"; then setenv bootargs "\(.*\)"; fi$/\1/p')"
read -r ka ia da <<< "${bm%%|*}"
if [ -n "$loads" ] && [ "$loads" = "fatload \${bootdev} $ka /uImage-$REL && fatload \${bootdev} $ia /uInitrd-kit-$REL && fatload \${bootdev} $da /meson8b-onecloud-$REL.dtb" ] &&
   [ $((ka + $(wc -c < "$B/uImage-$REL"))) -le $((da)) ] && [ $((da + 30000)) -le $((ia)) ]; then
    ok "the kit's lines: all three files with fatload \${bootdev} (as the previous script), bootm only if they loaded; uImage $ka, DTB $da, uInitrd $ia"
else bad "the kit's lines: loads '$loads', bootm '${bm%%|*}'"; echo "$new" | sed 's/^/    | /'; fi
[ "${bm#*|}" = "root=UUID=1234 rootwait rw console=ttyAML0,115200n8 no_console_suspend consoleblank=0 initcall_blacklist=meson_mx_sdhc_driver_init" ] &&
    ok "bootargs: the running command line with initcall_blacklist=" || bad "bootargs: '${bm#*|}'"
[ -f "$B/uImage-$REL" ] && [ -f "$B/uInitrd-kit-$REL" ] && [ -f "$B/meson8b-onecloud-$REL.dtb" ] &&
    ok "uImage-$REL, uInitrd-kit-$REL and the DTB in /boot (the FAT partition)" || bad "boot files: $(ls "$B")"
[ "$(cat "$B/uInitrd")" = i ] && grep -q '/boot/uInitrd changed' "$T/scr.out" &&
    ok "the system's 99-uboot re-pointed /boot/uInitrd during the install: put back" || bad "/boot/uInitrd after install: '$(cat "$B/uInitrd")'"
rc=0; ROOT=$R update-initramfs -u -k "$REL" > "$T/scr-upd.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(cat "$B/uInitrd")" = i ] && grep -q 'put back' "$T/scr-upd.out" &&
    ok "a later update-initramfs for the kit's release: the kit's hook puts /boot/uInitrd back after 99-uboot" ||
    { bad "later update-initramfs: status $rc, /boot/uInitrd '$(cat "$B/uInitrd")'"; sed 's/^/    | /' "$T/scr-upd.out"; }
# a later initramfs without the module, 99-uboot there: the kit's hook refuses it and the
# kit's uInitrd is kept (its name is not the uInitrd-RELEASE that 99-uboot moves away)
cp "$B/uInitrd-kit-$REL" "$T/scr-uinitrd.good"
rc=0; ROOT=$R STUB_DROP_MODULE=1 update-initramfs -u -k "$REL" > "$T/scr-drop.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] && cmp -s "$B/uInitrd-kit-$REL" "$T/scr-uinitrd.good" && [ "$(cat "$B/uInitrd")" = i ]; then
    ok "update-initramfs without the module, Armbian's 99-uboot there: refused (status $rc), uInitrd-kit-$REL kept, /boot/uInitrd the fallback's"
else bad "scr: initramfs without the module: status $rc, /boot: $(ls "$B" | tr '\n' ' ')"; sed 's/^/    | /' "$T/scr-drop.out"; fi
ROOT=$R update-initramfs -u -k "$REL" > /dev/null 2>&1
# the system's own kernel updated as Armbian's package does it on a FAT /boot: its
# preinst removes /boot/uImage, its postinst runs postinst.d (the kit's hook, for
# 6.6.0-armbian: no uImage to save yet) and update-initramfs (99-uboot: the new
# uInitrd) before it moves the new uImage into place; then an initramfs update
# for the kit's release
rm "$B/uImage"
rc=0; ROOT=$R "$R/etc/kernel/postinst.d/zz-meson-sdhc-uinitrd" 6.6.0-armbian /boot/vmlinuz-6.6.0-armbian > "$T/scr-upd2.out" 2>&1 || rc=$?
ROOT=$R update-initramfs -u -k 6.6.0-armbian >> "$T/scr-upd2.out" 2>&1 || rc=$?
echo "kernel 6.6.0-armbian" > "$B/uImage"
ROOT=$R update-initramfs -u -k "$REL" > "$T/scr-upd3.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(cat "$B/uInitrd")" = "uinitrd of 6.6.0-armbian" ] && [ "$(cat "$B/uImage")" = "kernel 6.6.0-armbian" ] &&
    ok "the system's own kernel updated (Armbian's order): its uInitrd and uImage are the fallback's from then on; a kit initramfs update puts back the uInitrd only" ||
    { bad "after the system's kernel update: status $rc, /boot/uInitrd '$(cat "$B/uInitrd")', /boot/uImage '$(cat "$B/uImage")'"; sed 's/^/    | /' "$T/scr-upd2.out" "$T/scr-upd3.out"; }
run scr-undo "$T/kit-onecloud" "$R" --undo
if [ "$rc" = 0 ] && [ "$(cat "$B/boot.cmd")" = "$BOOTCMD" ] && [ "$(od -An -tx1 "$B/boot.scr" | md5sum)" = "$scr0" ] &&
   [ ! -e "$B/boot.cmd.before-kit" ] && [ ! -e "$B/boot.scr.before-kit" ] && [ ! -e "$B/uImage-$REL" ]; then
    ok "boot.scr --undo: boot.cmd and boot.scr byte for byte as before, the kit's files gone"
else bad "boot.scr --undo: status $rc"; sed 's/^/    | /' "$T/scr-undo.out"; ls "$B"; fi
# --undo's update-initramfs for the kit's release runs 99-uboot once more
[ "$(cat "$B/uInitrd")" = "uinitrd of 6.6.0-armbian" ] && [ "$(cat "$B/uImage")" = "kernel 6.6.0-armbian" ] && [ ! -e "$R/etc/meson-mx-sdhc-rs/fallback" ] &&
    ok "boot.scr --undo: /boot/uInitrd and /boot/uImage the system's own" ||
    { bad "after --undo: /boot/uInitrd '$(cat "$B/uInitrd")', /boot/uImage '$(cat "$B/uImage")'"; sed 's/^/    | /' "$T/scr-undo.out"; }
grep -qx "dpkg -r linux-image-$REL" "$STUB_LOG" && [ ! -e "$B/initrd.img-$REL" ] && grep -q "the kit's kernel package is removed" "$T/scr-undo.out" &&
    ok "boot.scr --undo: the kit's kernel package removed (dpkg -r linux-image-$REL)" ||
    { bad "boot.scr --undo: the kit's kernel package not removed"; sed 's/^/    | /' "$T/scr-undo.out"; }
# an update-initramfs -u after --undo (apt's trigger) updates the newest kernel with an
# initramfs: the system's own, so 99-uboot moves the system's uInitrd over /boot/uInitrd
rc=0; ROOT=$R update-initramfs -u > "$T/scr-after-undo.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(cat "$B/uInitrd")" = "uinitrd of 6.6.0-armbian" ] && [ ! -e "$B/initrd.img-$REL" ] &&
    ok "boot.scr: update-initramfs -u after --undo: /boot/uInitrd the system's kernel's, none of the kit's made" ||
    { bad "update-initramfs -u after --undo: status $rc, /boot/uInitrd '$(cat "$B/uInitrd")', /boot: $(ls "$B" | tr '\n' ' ')"; sed 's/^/    | /' "$T/scr-after-undo.out"; }

# --- --rescue: the kit's kernel with the C driver, for the system first-contact runs from ----
kit "$T/kit-cmod" odroidc1 meson8b-odroidc1.dtb "" "CONFIG_MMC_MESON_MX_SDHC=m"
R="$T/r-rescue"; root "$R" extlinux
run rescue "$T/kit-cmod" "$R" --rescue
E="$R/boot/extlinux/extlinux.conf"
if [ "$rc" = 0 ] && grep -qx 'DEFAULT kit-rust' "$E" &&
   grep -qx '    APPEND console=ttyAML0,115200 root=UUID=1234 rootwait ro' "$E" &&
   grep -q 'MENU LABEL .*C SDHC driver, Rust module for first-contact' "$E" &&
   [ ! -e "$R/etc/modprobe.d/meson_mx_sdhc_rs.conf" ] && [ -f "$R/lib/modules/$REL/updates/meson_mx_sdhc_rs.ko" ]; then
    ok "--rescue: the kit's entry without initcall_blacklist=, no modprobe.d blacklist (C driver a module), the Rust module installed"
else bad "--rescue: status $rc"; sed 's/^/    | /' "$T/rescue.out" "$E"; ls -R "$R/etc/modprobe.d" 2>&1 | sed 's/^/    | /'; fi
# the kit-cmod kernel has no CONFIG_MMC_MESON_MX_SDIO=y: udev must not load the slot's Rust module
if [ "$rc" = 0 ] && grep -qx 'blacklist meson_mx_sdio_rs' "$R/etc/modprobe.d/meson_mx_sdio_rs-blacklist.conf" &&
   [ "$(grep -cv '^#' "$R/etc/modprobe.d/meson_mx_sdio_rs-blacklist.conf")" = 1 ]; then
    ok "--rescue, no built-in C driver for the SD card slot: meson_mx_sdio_rs blacklisted (loaded by name only)"
else bad "--rescue: no blacklist of meson_mx_sdio_rs for a kernel without the slot's C driver built in"; fi
run rescue-undo "$T/kit-cmod" "$R" --undo
[ "$rc" = 0 ] && [ ! -e "$R/etc/modprobe.d/meson_mx_sdio_rs-blacklist.conf" ] &&
    ok "--undo removes the blacklist of meson_mx_sdio_rs" ||
    { bad "--undo after --rescue: status $rc, the blacklist of meson_mx_sdio_rs left"; sed 's/^/    | /' "$T/rescue-undo.out"; }
root "$T/r-devroot" extlinux
run devroot "$T/kit" "$T/r-devroot" --cmdline "console=ttyAML0,115200 root=/dev/mmcblk1p2 rootwait"
refused devroot "--cmdline naming the root by device" 'names the root by device' "$T/r-devroot/boot/extlinux/extlinux.conf" "$EXTLINUX"

# --rescue on the eMMC's own system (its root on the SDHC's card): refused
mkdir -p "$T/bin-emmcroot"
printf '#!/bin/sh\necho /dev/mmcblk1p2\n' > "$T/bin-emmcroot/findmnt"
chmod +x "$T/bin-emmcroot/findmnt"
root "$T/r-rescue-emmc" extlinux
PATH="$T/bin-emmcroot:$PATH" run rescue-emmc "$T/kit-cmod" "$T/r-rescue-emmc" --rescue
refused rescue-emmc "--rescue with the root on the SDHC's card" "root \(/dev/mmcblk1p2\).*on the SDHC's card /dev/mmcblk1" \
    "$T/r-rescue-emmc/boot/extlinux/extlinux.conf" "$EXTLINUX"
# the eMMC's system (root on the SDHC's card) with its boot folder on another card (an fstab
# line naming the microSD card's boot partition): refused
mkdir -p "$T/bin-splitboot"
printf '#!/bin/sh\ncase "$*" in *FSTYPE*) echo ext4 ;; */boot) echo /dev/mmcblk0p1 ;; *) echo /dev/mmcblk1p2 ;; esac\n' > "$T/bin-splitboot/findmnt"
chmod +x "$T/bin-splitboot/findmnt"
root "$T/r-split" boot.ini
PATH="$T/bin-splitboot:$PATH" run splitboot "$T/kit" "$T/r-split"
refused splitboot "the root on the SDHC's card, the boot folder on another card" \
    "root \(/dev/mmcblk1p2\) is on the SDHC.s card /dev/mmcblk1 but /media/boot \(/dev/mmcblk0p1\) is on another card" \
    "$T/r-split/media/boot/boot.ini" "$BOOTINI"
# a boot partition mounted (fstab) by a UUID or LABEL that another file system carries
# (the same image on both cards)
mkdir -p "$T/bin-dupboot"
cat > "$T/bin-dupboot/blkid" <<'EOS'
#!/bin/sh
case "$*" in
"-o device -t UUID=1A2B-3C4D"|"-o device -t LABEL=BOOT") printf '/dev/mmcblk0p1\n/dev/mmcblk1p1\n' ;;
"-o device -t "*) echo /dev/mmcblk0p2 ;;
esac
EOS
chmod +x "$T/bin-dupboot/blkid"
for spec in UUID=1A2B-3C4D LABEL=BOOT; do
    root "$T/r-dupboot" boot.ini
    mkdir -p "$T/r-dupboot/etc"; echo "$spec /media/boot vfat defaults 0 0" > "$T/r-dupboot/etc/fstab"
    PATH="$T/bin-dupboot:$PATH" run dupboot "$T/kit" "$T/r-dupboot"
    refused dupboot "fstab mounts the boot partition by $spec, which two file systems carry" "mounts /media/boot by $spec, which 2 file systems carry" \
        "$T/r-dupboot/media/boot/boot.ini" "$BOOTINI"
    rm -rf "$T/r-dupboot"
done
# Armbian's Odroid-C1 boot.ini (a FAT /boot): ext4load ... || fatload ...; the kit's lines load
# with fatload and names from the partition's root, as a FAT /boot needs
mkdir -p "$T/bin-vfat"
printf '#!/bin/sh\ncase "$*" in *FSTYPE*) echo vfat ;; *) echo /dev/mmcblk0p1 ;; esac\n' > "$T/bin-vfat/findmnt"
chmod +x "$T/bin-vfat/findmnt"
R="$T/r-armc1"; root "$R" none
printf 'ODROIDC-UBOOT-CONFIG\nsetenv bootargs "root=UUID=1234 rootwait"\next4load mmc 0:1 0x21000000 /boot/uImage || fatload mmc 0:1 0x21000000 uImage\next4load mmc 0:1 0x22000000 /boot/uInitrd || fatload mmc 0:1 0x22000000 uInitrd\next4load mmc 0:1 0x21800000 /boot/dtb/meson8b-odroidc1.dtb || fatload mmc 0:1 0x21800000 dtb/meson8b-odroidc1.dtb\nbootm 0x21000000 0x22000000 0x21800000\n' > "$R/boot/boot.ini"
mkdir -p "$R/boot/dtb"; echo k > "$R/boot/uImage"; echo i > "$R/boot/uInitrd"; echo d > "$R/boot/dtb/meson8b-odroidc1.dtb"
PATH="$T/bin-vfat:$PATH" run armc1 "$T/kit" "$R"
if [ "$rc" = 0 ] && grep -q "then fatload mmc 0:1 0x21000000 uImage-$REL && fatload mmc 0:1 0x[0-9a-f]* uInitrd-kit-$REL && fatload mmc 0:1 0x[0-9a-f]* meson8b-odroidc1-$REL.dtb && " "$R/boot/boot.ini"; then
    ok "Armbian's C1 boot.ini (ext4load || fatload) on a FAT /boot: the kit's lines use fatload, names from the partition's root"
else bad "Armbian's C1 boot.ini: status $rc"; sed 's/^/    | /' "$T/armc1.out" "$R/boot/boot.ini"; fi
# under another kernel's driver for the SDHC (HardKernel's 3.10: switch-driver finds no
# mainline SDHC): the eMMC is the one card of type MMC
R="$T/r-vendor"; root "$R" boot.ini
mkdir -p "$R/sys/bus/mmc/devices/mmc1:0001/block/mmcblk1" "$R/sys/bus/mmc/devices/mmc0:aaaa/block/mmcblk0"
echo MMC > "$R/sys/bus/mmc/devices/mmc1:0001/type"; echo SD > "$R/sys/bus/mmc/devices/mmc0:aaaa/type"
SWITCH_DRIVER=/bin/false run vendor "$T/kit" "$R"
[ "$rc" = 0 ] && grep -q 'the eMMC: /dev/mmcblk1, the one MMC card' "$T/vendor.out" &&
    ok "no SDHC under the mainline driver (a vendor kernel): the eMMC found as the one MMC card, first contact's card compared with it" ||
    { bad "vendor kernel: status $rc"; sed 's/^/    | /' "$T/vendor.out"; }
# a boot folder without room for the uImage and uInitrd (a df and a stat that say the
# FAT /media/boot is a file system of its own, with 50 MiB free)
mkdir -p "$T/bin-full"
printf '#!/bin/sh\ncase "$*" in *media/boot*) printf "Avail\\n52428800\\n" ;; *) printf "Avail\\n10737418240\\n" ;; esac\n' > "$T/bin-full/df"
printf '#!/bin/sh\ncase "$*" in *media/boot*) echo 2 ;; *) echo 1 ;; esac\n' > "$T/bin-full/stat"
chmod +x "$T/bin-full/df" "$T/bin-full/stat"
root "$T/r-full" boot.ini
PATH="$T/bin-full:$PATH" run full "$T/kit" "$T/r-full"
refused full "a FAT /media/boot with 50 MiB free" "/media/boot has 50 MiB free; the kit.s kernel needs about [0-9]* MiB there" "$T/r-full/media/boot/boot.ini" "$BOOTINI"
# --dtb FILE: the entry loads the owner's DTB (the kit's without HS200), when first contact ran
# under the same SDHC node; not a DTB: refused
mkdtb "$T/nohs200.dtb" 'max-frequency = <100000000>; bus-width = <8>;'
root "$T/r-dtb" boot.ini
FC_DT_HS200=false run dtb "$T/kit" "$T/r-dtb" --dtb "$T/nohs200.dtb"
[ "$rc" = 0 ] && cmp -s "$T/nohs200.dtb" "$T/r-dtb/media/boot/meson8b-odroidc1-$REL.dtb" &&
    grep -q "the DTB to install (--dtb $T/nohs200.dtb) gives $DT_NODE what first contact ran under: max-frequency 100000000, mmc-hs200-1_8v false, bus-width 8" "$T/dtb.out" &&
    ok "--dtb FILE without HS200, first contact under the same: the kit's entry loads that DTB" || { bad "--dtb: status $rc"; sed 's/^/    | /' "$T/dtb.out"; }
# the DTB to install against the DT first contact ran under (its JSON's dt_ fields, fdtget)
root "$T/r-dt" boot.ini
run dtnohs "$T/kit" "$T/r-dt" --dtb "$T/nohs200.dtb"
refused dtnohs "--dtb without HS200, first contact ran with it" \
    "first contact ran with HS200 \(mmc-hs200-1_8v at $DT_NODE\); the DTB to install \(--dtb .*nohs200.dtb\) has none: give first contact's --dtb, or run first contact again under this DTB" \
    "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
FC_DT_HS200=false run dths "$T/kit" "$T/r-dt"
refused dths "the kit's DTB with HS200, first contact ran without it" \
    "first contact ran without HS200 \(no mmc-hs200-1_8v at $DT_NODE\); the DTB to install \(the kit's boot/meson8b-odroidc1.dtb\) has it: give first contact's --dtb" \
    "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
mkdtb "$T/slow.dtb" 'max-frequency = <50000000>; bus-width = <8>; mmc-hs200-1_8v;'
run dtmaxf "$T/kit" "$T/r-dt" --dtb "$T/slow.dtb"
refused dtmaxf "--dtb with another max-frequency" \
    "first contact ran with max-frequency 100000000 at $DT_NODE; the DTB to install \(--dtb .*slow.dtb\) has 50000000: give" \
    "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
FC_DT_BW=null run dtbw "$T/kit" "$T/r-dt"
refused dtbw "first contact under a node without bus-width, the kit's DTB with bus-width 8" \
    "first contact ran with bus-width \(none\) at $DT_NODE; the DTB to install .* has 8" "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
mkdtb "$T/nonode.dtb" none
run dtnonode "$T/kit" "$T/r-dt" --dtb "$T/nonode.dtb"
refused dtnonode "--dtb without the SDHC node first contact ran on" \
    "the DTB to install \(--dtb .*nonode.dtb\) has no node $DT_NODE, the SDHC first contact ran on" "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
FC_DT=omit run dtold "$T/kit" "$T/r-dt"
refused dtold "a first contact JSON without the dt_ fields (an older first-contact)" \
    "has no dt_node, dt_max_frequency, dt_hs200_1_8v and dt_bus_width .*run first contact again" "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
# fdtget missing (a PATH without it)
F="$T/nofdt"; mkdir -p "$F/bin" "$F/sbin"
ln -s /usr/bin/* "$F/bin/"; ln -s /usr/sbin/* "$F/sbin/"; rm -f "$F/bin/fdtget" "$F/sbin/fdtget"
PATH="$S:$F/bin:$F/sbin" run dtnofdtget "$T/kit" "$T/r-dt"
refused dtnofdtget "fdtget missing" "fdtget missing: apt-get install device-tree-compiler" "$T/r-dt/media/boot/boot.ini" "$BOOTINI"
echo "not a DTB" > "$T/notdtb"
root "$T/r-notdtb" boot.ini
run notdtb "$T/kit" "$T/r-notdtb" --dtb "$T/notdtb"
refused notdtb "--dtb with a file that is no DTB" "is not a flattened device tree" "$T/r-notdtb/media/boot/boot.ini" "$BOOTINI"
# a command line that would make a boot.ini line longer than HardKernel's U-Boot reads
root "$T/r-long" boot.ini
run long "$T/kit" "$T/r-long" --cmdline "console=ttyAML0,115200 root=UUID=1234 rootwait ro $(printf 'x%.0s' $(seq 500))"
refused long "a boot.ini line over 510 bytes" "more than HardKernel's U-Boot reads" "$T/r-long/media/boot/boot.ini" "$BOOTINI"

echo "board-kit-install: $((SECONDS - start))s"
[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: the board kit's installer: refusals, boot.ini, boot.scr and extlinux switches, --undo"
