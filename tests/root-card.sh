# The card of the tests that boot with their root file system on it
# (tests/board/root-on-sd-slot.sh, tests/board-kernel/root-on-emmc.sh; sourced
# after tests/lib.sh and scripts/common.sh): the tools it needs, the root's
# tree, the card image with the root partition, and what the boots left on it,
# read on the host.
# shellcheck shell=bash

# root_card_tools: BB, the armhf busybox-static; dies if it, sfdisk, mkfs.ext4,
# e2fsck or debugfs is missing
root_card_tools() {
    BB="$CACHE/src/busybox-static/bin/busybox"
    [ -x "$BB" ] || die "busybox-static (armhf) missing (make setup)"
    local t
    for t in sfdisk mkfs.ext4 e2fsck debugfs; do
        command -v "$t" > /dev/null || die "$t missing (make setup: fdisk, e2fsprogs)"
    done
}

# root_tree DIR INIT MODULE WHAT: DIR, a small root: busybox ($BB), switch-driver and
# the guest helpers in /bin, INIT as /sbin/init, MODULE in /lib/modules, and
# /etc/board-root saying "root file system of WHAT"
root_tree() {
    mkdir -p "$1"/{bin,sbin,dev,proc,sys,tmp,etc,data,root,var/lib/board-test,lib/modules}
    cp "$BB" "$1/bin/busybox"
    cp "$TOP/tests/guest/emu-lib.sh" "$TOP/scripts/switch-driver" "$1/bin/"
    cp "$2" "$1/sbin/init"
    cp "$3" "$1/lib/modules/"
    chmod 755 "$1/bin/busybox" "$1/bin/switch-driver" "$1/sbin/init"
    echo "root file system of $4" > "$1/etc/board-root"
}

# root_card IMG MIB LABEL DIR: IMG, a card of MIB MiB with a DOS partition table and
# one ext4 partition, labelled LABEL, made from DIR with mkfs.ext4 -d ($T/part.img);
# start and size: the partition's first sector and its sectors
root_card() {
    truncate -s "${2}M" "$1"
    printf 'label: dos\nstart=2048, type=83\n' | sfdisk -q "$1"
    read -r start size < <(sfdisk -d "$1" | sed -nE 's/.*start= *([0-9]+), size= *([0-9]+).*/\1 \2/p')
    if [ -z "$start" ] || [ -z "$size" ]; then die "cannot read the partition back from sfdisk -d"; fi
    truncate -s $((size * 512)) "$T/part.img"
    mkfs.ext4 -q -F -L "$3" -d "$4" "$T/part.img"
    dd if="$T/part.img" of="$1" bs=512 seek="$start" conv=notrunc status=none
}

# root_card_fsck IMG: the partition root_card made (start, size) read back out of IMG
# ($T/part.img) passes e2fsck -fn; $T/boots: the boot log the boots wrote on it
root_card_fsck() {
    dd if="$1" of="$T/part.img" bs=512 skip="$start" count="$size" status=none
    e2fsck -fn "$T/part.img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; die "e2fsck -fn found problems"; }
    echo "  ok: e2fsck -fn: $(tail -1 "$T/fsck.out")"
    debugfs -R 'cat /var/lib/board-test/boots' "$T/part.img" 2> /dev/null > "$T/boots"
}

# root_card_files N...: the files boot N wrote (/data/boot-N of $T/part.img), read
# out with debugfs, match their MD5SUMS
root_card_files() {
    local n d
    mkdir "$T/out"
    debugfs -R "rdump /data $T/out" "$T/part.img" 2> /dev/null
    for n in "$@"; do
        d="$T/out/data/boot-$n"
        [ -f "$d/MD5SUMS" ] || die "no /data/boot-$n/MD5SUMS on the card"
        (cd "$d" && md5sum -c --quiet MD5SUMS) || die "/data/boot-$n differs when read on the host"
        echo "  ok: /data/boot-$n ($(cat "$d/DRIVER") driver): $(wc -l < "$d/MD5SUMS") files match on the host"
    done
}
