# board-region.sh: what scripts/bench-board and scripts/first-contact share
# about the card they may write to, sourced by both from the folder they are
# in (POSIX sh; busybox sh is enough): sizes, the card and its controller,
# its partitions and partition table area, and the refusals of a card in use
# and of a write region over a partition or the partition table area that
# was not named for destruction (--destroy-partitions,
# --destroy-partition-table).
#
# The script that sources it sets PROG, SYSFS, PROCFS, TESTING (1: a disk
# image may stand for the disk), SW (switch-driver's path) and defines say,
# die and refuse; REGION_WRITER names what writes ("the write jobs") and
# REGION_READ_ONLY how to run without writing, in the refusals.
# shellcheck shell=sh disable=SC2034,SC2153 # variables set for, or by, the script that sources it

# the largest size taken (8 PiB): exact in awk's doubles and in any shell's
# 64-bit arithmetic, with room for offset + size
MAX_BYTES=9007199254740992

# c_blacklisted: this boot's command line keeps the built-in C driver off
# (initcall_blacklist=meson_mx_sdhc_driver_init, as the board kit's Rust
# entry has it): no module to load, nothing to bind it to
C_INITCALL=meson_mx_sdhc_driver_init
c_blacklisted() {
    tr ' ' '\n' 2> /dev/null < "$PROCFS/cmdline" | sed -n 's/^initcall_blacklist=//p' | tr ',' '\n' | grep -qx "$C_INITCALL"
}
# to_bytes VALUE: 4096, 64k, 1m, 2G, 512KiB -> bytes (fails on garbage)
to_bytes() {
    v=$1
    case "$v" in
    *[iI][bB]) v=${v%??} ;;
    esac
    case "$v" in
    *[kK]) n=${v%?}; m=1024 ;;
    *[mM]) n=${v%?}; m=1048576 ;;
    *[gG]) n=${v%?}; m=1073741824 ;;
    *[tT]) n=${v%?}; m=1099511627776 ;;
    *) n=$v; m=1 ;;
    esac
    case "$n" in
    '' | *[!0-9]*) return 1 ;;
    esac
    n=$(echo "$n" | sed 's/^0*//')
    # no overflow: at most 16 digits, and n * m at most MAX_BYTES
    [ ${#n} -le 16 ] && [ "${n:-0}" -le $((MAX_BYTES / m)) ] || return 1
    echo $(( ${n:-0} * m ))
}

# human BYTES: 131072 -> 128 KiB
human() {
    if [ "$1" -ge 1073741824 ] && [ $(($1 % 1073741824)) = 0 ]; then echo "$(($1 / 1073741824)) GiB"
    elif [ "$1" -ge 1048576 ] && [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576)) MiB"
    elif [ "$1" -ge 1024 ] && [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024)) KiB"
    else echo "$1 bytes"; fi
}

# compatible DIR STRING: the DT node of the device DIR is compatible with STRING
compatible() { [ -f "$1/of_node/compatible" ] && tr '\000' '\n' < "$1/of_node/compatible" | grep -qx "$2"; }

# card_identify: DEV, a whole disk on the SDHC, or with REGION_SD_SLOT=1 in
# an Amlogic MX SDIO controller's SD card slot too (a disk image with
# TESTING=1), and its card: sets NAME, SYS, CTRL (the controller's platform
# device), PDEV (its sysfs folder), HOSTDEV (the folder of the device whose
# mmc_host holds the card: PDEV, or the slot's device), KIND (sdhc,
# sd-slot), DEV_SECTORS, DEV_BYTES, CID, CARD_TYPE, CARD_NAME, BOARD and
# TIME_BASE
card_identify() {
    [ -b "$DEV" ] || { [ "$TESTING" = 1 ] && [ -f "$DEV" ]; } || die "$DEV is not a block device"
    NAME=$(basename "$(readlink -f "$DEV")")
    SYS=$SYSFS/block/$NAME
    [ -d "$SYS" ] || die "$DEV ($NAME) is not a whole disk (a partition?): give the whole disk (switch-driver disk names the SDHC's) and a region with --offset/--size"
    case "$NAME" in
    mmcblk*boot* | mmcblk*rpmb) die "$DEV is an eMMC hardware partition; give the user area, /dev/$(echo "$NAME" | sed -E 's/(boot[0-9]+|rpmb)$//')" ;;
    esac
    # .../<platform device>/mmc_host/mmcN/mmcN:RCA/block/mmcblkN, and for
    # the SD card slot .../<controller>/<slot device>/mmc_host/...
    # shellcheck disable=SC2046 # two words: the host's device, its parent
    set -- $(readlink -f "$SYS" | awk -F/ '{ for (i = 3; i <= NF; i++) if ($i == "mmc_host") { print $(i - 1), ($(i - 2) == "" ? "-" : $(i - 2)); exit } }')
    [ $# = 2 ] || die "$DEV is not an MMC/SD card (no mmc_host in $(readlink -f "$SYS"))"
    CTRL=$1
    PDEV=$SYSFS/bus/platform/devices/$CTRL
    HOSTDEV=$PDEV
    KIND=sdhc
    if ! compatible "$PDEV" amlogic,meson-mx-sdhc; then
        if [ "${REGION_SD_SLOT:-0}" = 1 ] && compatible "$PDEV" mmc-slot &&
           { compatible "$SYSFS/bus/platform/devices/$2" amlogic,meson8-sdio ||
             compatible "$SYSFS/bus/platform/devices/$2" amlogic,meson8b-sdio; }; then
            CTRL=$2
            PDEV=$SYSFS/bus/platform/devices/$CTRL
            KIND=sd-slot
        elif [ "${REGION_SD_SLOT:-0}" = 1 ]; then
            die "$DEV is on $CTRL, which is neither an Amlogic MX SDHC (amlogic,meson-mx-sdhc) nor the SD card slot of an Amlogic MX SDIO controller (amlogic,meson8-sdio, amlogic,meson8b-sdio): switching drivers would change nothing there"
        else
            die "$DEV is on $CTRL, which is not an Amlogic MX SDHC (amlogic,meson-mx-sdhc): switching drivers would change nothing there"
        fi
    fi
    DEV_SECTORS=$(cat "$SYS/size")
    DEV_BYTES=$((DEV_SECTORS * 512))
    CID=$(cat "$SYS/device/cid" 2>/dev/null || echo none)
    CARD_TYPE=$(cat "$SYS/device/type" 2>/dev/null || echo unknown)
    CARD_NAME=$(cat "$SYS/device/name" 2>/dev/null || echo unknown)
    # the project's emulated board (QEMU virt + our SDHC model) runs in virtual time
    BOARD="Meson8b board"
    TIME_BASE=real
    if tr '\000' '\n' 2>/dev/null < "$PROCFS/device-tree/compatible" | grep -qx 'linux,dummy-virt'; then
        BOARD="Emulated Meson8b board"
        TIME_BASE=virtual
    fi
}

# card_layout: the partitions of DEV and its partition table area:
# sets PARTS, MIB, HEAD_END, TABLE and TAIL_START
card_layout() {
    # PARTS: "name start end" (bytes) per partition of the disk.  An MBR's
    # extended partition shows as 2 sectors in sysfs: it is taken to reach to the
    # end of the last logical partition (5 and up), since its EBRs lie in between.
    PARTS=$(for p in "$SYS/$NAME"*; do
        [ -f "$p/partition" ] || continue
        echo "${p##*/} $(cat "$p/partition") $(cat "$p/start") $(cat "$p/size")"
    done | awk '{ n[NR] = $1; num[NR] = $2; s[NR] = $3 * 512; e[NR] = ($3 + $4) * 512
                  if ($2 >= 5 && e[NR] > lend) lend = e[NR] }
        END { for (i = 1; i <= NR; i++) {
                  if (num[i] <= 4 && e[i] - s[i] <= 1024 && lend > e[i]) e[i] = lend
                  print n[i], s[i], e[i] } }')
    # the partition table area: [0, HEAD_END), everything before the first
    # partition and at least the first MiB (the MBR or the primary GPT, and what
    # a boot loader keeps before the first partition); with a GPT also
    # [TAIL_START, DEV_BYTES), the last MiB (the backup GPT).  A disk with no
    # partition table Linux reads and no partitions that is not blank in its
    # first 4 MiB (a vendor layout such as Amlogic's own eMMC partition table,
    # or a file system on the whole disk) is all partition table area.
    MIB=1048576
    HEAD_END=$(echo "$PARTS" | awk -v m=$MIB '$1 != "" && ($2 < f || f == "") { f = $2 }
        END { if (f == "" || f < m) f = m; printf "%.0f\n", int((f + 4095) / 4096) * 4096 }')
    TABLE=none
    if dd if="$DEV" bs=512 count=1 of=/dev/null 2>/dev/null; then
        [ "$(dd if="$DEV" bs=512 skip=1 count=1 2>/dev/null | dd bs=8 count=1 2>/dev/null)" != "EFI PART" ] || TABLE=GPT
        if [ "$TABLE" = none ] && [ "$(dd if="$DEV" bs=1 skip=510 count=2 2>/dev/null)" = "$(printf '\125\252')" ]; then
            TABLE=MBR
            ee=$(printf '\356')
            for o in 450 466 482 498; do    # a protective MBR's type byte: GPT
                [ "$(dd if="$DEV" bs=1 skip=$o count=1 2>/dev/null)" != "$ee" ] || TABLE=GPT
            done
        fi
        if [ "$TABLE" = none ] && [ -z "$PARTS" ] &&
            [ "$(dd if="$DEV" bs=65536 count=64 2>/dev/null | tr -d '\000' | wc -c)" -gt 0 ]; then
            TABLE="none, not blank"
            HEAD_END=$DEV_BYTES
        fi
    else
        TABLE=unknown    # not readable (not root?): keep out of a GPT's backup too
    fi
    TAIL_START=$DEV_BYTES
    case "$TABLE" in GPT | unknown) TAIL_START=$((DEV_BYTES - MIB)) ;; esac
    [ "$TAIL_START" -gt "$HEAD_END" ] || TAIL_START=$HEAD_END
}

# region_fits: OFFSET and SIZE, a region of DEV, are 4 KiB aligned and
# inside it; sets END
region_fits() {
    [ $((OFFSET % 4096)) = 0 ] || refuse "--offset $OFFSET is not a multiple of 4096"
    [ $((SIZE % 4096)) = 0 ] || refuse "--size $SIZE is not a multiple of 4096"
    [ "$OFFSET" -lt "$DEV_BYTES" ] ||
        refuse "the region starts at byte $OFFSET, at or past the end of $DEV ($DEV_BYTES bytes, $(human "$DEV_BYTES"))"
    [ "$SIZE" -gt 0 ] || refuse "the region is empty"
    END=$((OFFSET + SIZE))
    [ "$END" -le "$DEV_BYTES" ] ||
        refuse "the region [$OFFSET, $END) does not fit in $DEV: it ends $((END - DEV_BYTES)) bytes past the end of the device ($DEV_BYTES bytes, $(human "$DEV_BYTES"))"
}

# in_use: one line per mount (also /dev/root, by device number), swap area or
# holder (device mapper, md) of the card's block devices: switch-driver's
# own check, the one that refuses to unbind a card in use
in_use() { "$SW" users "$CTRL"; }

# card_unused WHAT-IT-DOES: refuses a card in use, saying why that matters
card_unused() {
    USES=$(in_use) || die "switch-driver users $CTRL failed"
    if [ -n "$USES" ]; then
        echo "$USES" | sed "s/^/$PROG:   /" >&2
        refuse "$DEV holds a mounted filesystem, swap or a holder (above). $1; no option overrides this. Use a card nothing uses, or unmount it, swapoff or remove the holder first."
    fi
}

# region_named: the partitions of DESTROY_PARTS (refused unless each is
# one of DEV), as NAMED; DESTROYS empty
region_named() {
    # every partition the region overlaps must be named with --destroy-partitions,
    # the partition table area with --destroy-partition-table
    NAMED=""
    for n in $DESTROY_PARTS; do
        n=${n#/dev/}
        echo "$PARTS" | awk -v n="$n" '$1 == n { f = 1 } END { exit !f }' ||
            refuse "--destroy-partitions: '$n' is not a partition of $DEV (its partitions: $(echo "$PARTS" | awk '{ printf "%s%s", s, $1; s = " " }' | sed 's/^$/none/'))"
        NAMED="$NAMED $n"
    done
    DESTROYS=""      # what the region's writes overwrite, as named
}

# region_writable: refuses a write region [OFFSET, END) that overlaps a
# partition not in NAMED or the partition table area without
# DESTROY_TABLE=1; adds what it may overwrite to DESTROYS
region_writable() {
    bad=""
    while read -r pn ps pe; do
        { [ -n "$pn" ] && [ "$ps" -lt "$END" ] && [ "$pe" -gt "$OFFSET" ]; } || continue
        case " $NAMED " in
        *" $pn "*) DESTROYS="$DESTROYS /dev/$pn"
            say "caution: the write region [$OFFSET, $END) overlaps /dev/$pn [$ps, $pe), named by --destroy-partitions: $REGION_WRITER overwrite it" ;;
        *) bad="$bad /dev/$pn"
            echo "$PROG:   the write region [$OFFSET, $END) overlaps /dev/$pn [$ps, $pe)" >&2 ;;
        esac
    done <<EOF
$PARTS
EOF
    tab=""
    if [ "$OFFSET" -lt "$HEAD_END" ] || [ "$END" -gt "$TAIL_START" ]; then
        what="[0, $HEAD_END)"
        [ "$TAIL_START" = "$DEV_BYTES" ] || what="$what and [$TAIL_START, $DEV_BYTES)"
        if [ "$DESTROY_TABLE" = 1 ]; then
            DESTROYS="$DESTROYS partition-table"
            say "caution: the write region [$OFFSET, $END) overlaps the partition table area $what (table: $TABLE), named by --destroy-partition-table: $REGION_WRITER overwrite it"
        else
            tab=1
            echo "$PROG:   the write region [$OFFSET, $END) overlaps the partition table area $what (table: $TABLE; everything before the first partition and at least the first MiB, with a GPT or an unreadable table the last MiB, all of a disk with no partition table and no partitions that is not blank)" >&2
        fi
    fi
    if [ -n "$bad" ] || [ -n "$tab" ]; then
        how=""
        [ -z "$bad" ] || how="--destroy-partitions $(echo "$bad" | sed 's|/dev/||g; s/^ *//; s/ /,/g')"
        [ -z "$tab" ] || how="$how${how:+ and }--destroy-partition-table"
        refuse "$REGION_WRITER would overwrite$bad${tab:+${bad:+ and} the partition table} (above). Choose a region outside them (lsblk -b -o NAME,START,SIZE $DEV: START in sectors of 512 bytes), $REGION_READ_ONLY, or, if their data may be destroyed, name them: $how"
    fi
}

# region_named_unused: a note for each named partition the region misses
region_named_unused() {
    for n in $NAMED; do
        case "$DESTROYS " in *"/dev/$n "*) ;; *) say "note: --destroy-partitions names $n, which $REGION_WRITER do not touch" ;; esac
    done
}

# card_dev: the card's whole block device under the controller once it is
# there (it enumerates asynchronously after a bind), waiting up to 30 s
card_dev() {
    i=0
    until d=$("$SW" disk "$CTRL" 2>/dev/null) && { [ -b "$d" ] || { [ "$TESTING" = 1 ] && [ -f "$d" ]; }; }; do
        i=$((i + 1))
        [ "$i" -le 300 ] || return 1
        sleep 0.1 2>/dev/null || sleep 1
    done
    echo "$d"
}

# wait_card: after a switch, find the card's block device under the
# controller (its name can change), check it is the same card; sets CUR
wait_card() {
    d=$(card_dev) || die "no block device under $CTRL 30 s after the switch"
    n=$(basename "$d")
    b=$SYSFS/block/$n
    [ "$(cat "$b/size")" = "$DEV_SECTORS" ] || die "the card under $CTRL is now $n with $(cat "$b/size") sectors, not $DEV_SECTORS: a different card?"
    c=$(cat "$b/device/cid" 2>/dev/null || echo none)
    [ "$c" = "$CID" ] || die "the card under $CTRL is now $n with CID $c, not $CID: a different card?"
    [ "$n" = "$NAME" ] || say "note: the card is now $n (was $NAME)"
    CUR=$d
    NAME=$n
}
