#!/usr/bin/env bash
# The SDHC node the emulated board generates, validated with dt-validate
# (dtschema, PyPI, installed by make setup) against the Linux 7.3 source's own
# bindings (amlogic,meson-mx-sdhc.yaml and the mmc-controller schema it
# references): 0 errors on the SDHC node for every DT variant scripts/emu-run
# offers, and a broken copy of the node is rejected (the check bites).
#
# The DTBs are QEMU's (emu-run --dump-dtb, one per variant, no boot); one boot
# with the defaults checks that the dump is the DTB the guest kernel got
# (/sys/firmware/fdt, printed in base64 on the console), /chosen's rng-seed
# (which the kernel wipes) and the initramfs's end aside.  The variants are read from
# `emu-run --help`: every option with a list of values (--compatible, --card,
# and whatever is added later, e.g. a board option) is tried value by value,
# the others at their defaults; --driver and --kernel do not change the DT.
# The schema is scripts/dt-schema's (dt-mk-schema -j, ~90 s when it is made;
# cached by a hash of the bindings and the dtschema version).
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"

NOT_DT_OPTIONS=" driver kernel "
VENV="$CACHE/venv-dtschema"
for t in "$VENV/bin/dt-validate"; do
    [ -x "$t" ] || die "$t missing (run 'make setup')"
done
for t in fdtput fdtget dtc; do
    command -v "$t" >/dev/null || die "$t missing (run 'make setup': device-tree-compiler)"
done
PY="$VENV/bin/python"
start=$SECONDS

# --- the schema (scripts/dt-schema), made in the background while the board boots
MK_PID=""
trap '[ -z "$MK_PID" ] || kill "$MK_PID" 2>/dev/null; rm -rf "$T"' EXIT
mk_start=$SECONDS
"$TOP/scripts/dt-schema" > "$T/schema.path" 2> "$T/mk-schema.err" &
MK_PID=$!
wait_schema() {
    if [ -n "$MK_PID" ]; then
        wait "$MK_PID" || { MK_PID=""; cat "$T/mk-schema.err"; die "scripts/dt-schema failed"; }
        MK_PID=""
        SCHEMA=$(cat "$T/schema.path")
        echo "schema: $SCHEMA ($((SECONDS - mk_start)) s)"
    fi
}

# --- the variants emu-run offers ------------------------------------------------
# Help lines look like "  --compatible meson8b|meson8m2|meson8   ... (default meson8b)".
# Continuation lines (deeper indented) are joined to their option first.
JOIN='/^  --/ {if (l != "") print l; l = $0; next}
      /^           *[^ -]/ && l != "" {sub(/^ +/, " "); l = l $0; next}
      {if (l != "") print l; l = ""} END {if (l != "") print l}'
declare -a RUNS=("")          # "" = all defaults
while read -r opt vals rest; do
    opt=${opt#--}
    [[ "$NOT_DT_OPTIONS" == *" $opt "* ]] && continue
    def=$(sed -nE 's/.*\(default:? ([A-Za-z0-9_.-]+).*/\1/p' <<<"$rest")
    IFS='|' read -r -a values <<<"$vals"
    for v in "${values[@]}"; do
        [ "$v" = "$def" ] && continue
        RUNS+=("--$opt $v")
    done
done < <("$EMU" --help | awk "$JOIN" | grep -E '^  --[a-z-]+ [A-Za-z0-9_.-]+(\|[A-Za-z0-9_.-]+)+( |$)')
[ ${#RUNS[@]} -ge 3 ] || die "found only ${#RUNS[@]} DT variants in emu-run --help (expected --compatible's at least)"
printf '%s\n' "${RUNS[@]}" | grep -q -- '^--compatible ' || die "no --compatible variants found in emu-run --help"
printf 'variants: %s\n' "$(printf '[%s] ' "${RUNS[@]/#/}")" | sed 's/\[\]/[defaults]/'

g=$(guest fdt <<'G'
f=/sys/firmware/fdt
[ -r $f ] || fail "no $f"
echo "@@FDT-SUM $(sha256sum $f | cut -d' ' -f1) $(wc -c < $f)"
echo "@@FDT-BEGIN"
base64 $f
echo "@@FDT-END"
G
)

# sdhc_node DTB: path and compatible list of the node compatible with
# amlogic,meson-mx-sdhc (exactly one)
sdhc_node() {
    "$PY" - "$1" <<'P'
import sys, libfdt
fdt = libfdt.Fdt(open(sys.argv[1], "rb").read())
found = []
node, depth = 0, 0
while node >= 0:
    try:
        comp = fdt.getprop(node, "compatible").as_stringlist()
    except libfdt.FdtException:
        comp = []
    if "amlogic,meson-mx-sdhc" in comp:
        found.append((fdt.get_path(node), comp))
    node, depth = fdt.next_node(node, depth, (libfdt.NOTFOUND,))
if len(found) != 1:
    sys.exit("%d nodes compatible with amlogic,meson-mx-sdhc" % len(found))
print(found[0][0], ",".join(found[0][1]))
P
}

# One dt-validate run over every DTB (loading the 28 MB schema takes seconds).
# Its lines start with the file name; a line about the SDHC node names it by
# its name (mmc@...) and, in dtschema 2024+, its compatible, or by its path.
validate_all() {
    local rc=0
    "$VENV/bin/dt-validate" -m -s "$SCHEMA" "$@" > "$T/validate.out" 2>&1 || rc=$?
    if grep -qE '^Traceback|Error: ' "$T/validate.out" || [ "$rc" -gt 1 ]; then
        cat "$T/validate.out"; die "dt-validate failed to run (status $rc)"
    fi
}
# node_errors DTB NODE_PATH: the lines about the node to $T/node.err, their count to NERR
node_errors() {
    local dtb=$1 path=$2 name=${2##*/}
    # -m lists the compatibles no schema matched: the SDHC's must not be one.
    if grep -F "$dtb: $path: failed to match any schema" "$T/validate.out"; then
        die "no schema matched the SDHC node $path"
    fi
    grep -F "$dtb: " "$T/validate.out" |
        grep -F -e ": $name:" -e ": $name (" -e "$path:" > "$T/node.err" || true
    NERR=$(wc -l < "$T/node.err")
}

fail=0
# boot_dtb FILE: the DTB the guest kernel got with all defaults, from
# /sys/firmware/fdt over the console (a kernel message in the middle of the
# base64 lines would damage it; the guest's checksum tells, and the boot is
# tried once more).
boot_dtb() {
    local out=$1 attempt sum size
    for attempt in 1 2; do
        emu --driver none "$g" || { echo "FAILED: the board run failed (build/test-logs/dt-validate.run$EMU_RUNS.serial.log)"; return 1; }
        sed -n '/@@FDT-BEGIN/,/@@FDT-END/p' "$T/serial.log" | tr -d '\r' |
            grep -E '^[A-Za-z0-9+/=]+$' | base64 -d > "$out" 2>/dev/null || true
        sum=""; size=""
        read -r sum size < <(sed -n 's/.*@@FDT-SUM \([0-9a-f]*\) \([0-9]*\).*/\1 \2/p' "$T/serial.log" | head -1) || true
        [ -n "$sum" ] && [ "$(sha256sum < "$out" | cut -d' ' -f1)" = "$sum" ] && return 0
        echo "  the DTB came over the console damaged (guest: $size bytes, host: $(stat -c %s "$out")), attempt $attempt"
    done
    return 1
}
# Every variant's DTB from QEMU's dumpdtb (emu-run --dump-dtb, no boot); the
# defaults' dump must be byte for byte the DTB the booted guest got, so the
# dumps are what a kernel sees.
if boot_dtb "$T/booted.dtb"; then
    cp "$T/booted.dtb" "$LOGDIR/dt-validate.booted.dtb"
    "$EMU" --driver none --dump-dtb "$T/dumped.dtb" "$g" || die "emu-run --dump-dtb failed"
    # Two differences are expected, both in /chosen: the kernel wipes
    # rng-seed after taking it (fdt_nop_property), and the initramfs, made
    # anew for each run, can differ in size by a byte of gzip output
    # (linux,initrd-end).  Everything else must be the same.
    for f in booted dumped; do
        dtc -q -I dtb -O dts "$T/$f.dtb" | grep -v -E '^\s*(rng-seed|linux,initrd-end) = ' > "$T/$f.dts"
    done
    if cmp -s "$T/booted.dts" "$T/dumped.dts" && [ "$(wc -l < "$T/booted.dts")" -gt 100 ]; then
        echo "  ok: the dumped DTB is the one the booted guest got ($(wc -l < "$T/booted.dts") lines of source, /chosen's rng-seed and linux,initrd-end aside)"
    else
        diff "$T/booted.dts" "$T/dumped.dts" | head -20
        echo "FAILED: the dumped DTB differs from the booted guest's /sys/firmware/fdt"; fail=1
    fi
else
    echo "FAILED: no DTB from the booted guest"; fail=1
fi
declare -A SEEN=()
DTBS=(); PATHS=(); NAMES=()
for run in "${RUNS[@]}"; do
    label=${run:-defaults}; label=${label//--/}; label=${label// /-}
    # shellcheck disable=SC2086
    if ! "$EMU" --driver none $run --dump-dtb "$T/$label.dtb" "$g"; then
        echo "FAILED: emu-run --dump-dtb with [$run] failed"; fail=1; continue
    fi
    sum=$(sha256sum < "$T/$label.dtb" | cut -d' ' -f1)
    cp "$T/$label.dtb" "$LOGDIR/dt-validate.$label.dtb"
    read -r path comp < <(sdhc_node "$T/$label.dtb") || { echo "FAILED: [$run]: no unique SDHC node"; fail=1; continue; }
    if [ -n "${SEEN[$sum]:-}" ]; then
        echo "  [$run]: same DTB as [${SEEN[$sum]}], $path ($comp)"
        continue
    fi
    SEEN[$sum]=${run:-defaults}
    DTBS+=("$T/$label.dtb"); PATHS+=("$path"); NAMES+=("[$run]: $path ($comp)")
done
[ ${#DTBS[@]} -gt 0 ] || { echo "FAILED: no DTB to validate"; exit 1; }

# The check bites: broken copies of the first DTB's node.
first_path=${PATHS[0]}
BROKEN=(); WHAT=()
broken() { # description fdtput-args (the file is appended as $T/broken-N.dtb)...
    local f="$T/broken-${#BROKEN[@]}.dtb" what=$1; shift
    cp "${DTBS[0]}" "$f"
    "${@/@DTB@/$f}" || die "cannot break the DTB: $*"
    BROKEN+=("$f"); WHAT+=("$what")
}
broken "only two clock-names" fdtput -t s @DTB@ "$first_path" clock-names clkin0 clkin1
broken "no interrupts" fdtput -d @DTB@ "$first_path" interrupts
broken "the generic compatible alone" fdtput -t s @DTB@ "$first_path" compatible amlogic,meson-mx-sdhc

wait_schema
s=$SECONDS
validate_all "${DTBS[@]}" "${BROKEN[@]}"
echo "dt-validate on ${#DTBS[@]} DTB(s) and ${#BROKEN[@]} broken copies: $((SECONDS - s))s"
for i in "${!DTBS[@]}"; do
    node_errors "${DTBS[$i]}" "${PATHS[$i]}"
    echo "  ${NAMES[$i]}: $NERR dt-validate error(s) on the SDHC node"
    dtc -q -I dtb -O dts "${DTBS[$i]}" 2>/dev/null |
        awk -v n="${PATHS[$i]##*/}" '$1 == n {p=1} p {print "      " $0} p && /^\t\t};/ {p=0}' || true
    if [ "$NERR" != 0 ]; then
        sed 's/^/      /' "$T/node.err"; fail=1
    fi
done
echo "broken copies of $first_path:"
for i in "${!BROKEN[@]}"; do
    node_errors "${BROKEN[$i]}" "$first_path"
    if [ "$NERR" -gt 0 ]; then
        echo "  ok: rejected, ${WHAT[$i]}: $(head -1 "$T/node.err" | cut -c1-160)"
    else
        echo "  FAILED: dt-validate accepted the node with ${WHAT[$i]}"; fail=1
    fi
done

echo "dt-validate: ${#SEEN[@]} distinct DTB(s) from ${#RUNS[@]} variant(s) in $((SECONDS - start))s"
[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: 0 errors on the SDHC node for every variant; broken nodes rejected"
