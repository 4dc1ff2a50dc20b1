#!/usr/bin/env bash
# A card that stops answering (the model times out every response, for
# ever), with the Rust driver: during probe, and during I/O.  No oops, no hang
# beyond the MMC core's timeouts, clear errors, the module unloads, and once
# the card answers again a reload brings it back with its data intact.
. "$(dirname "$0")/../lib.sh"
# 1. Dead from the start: no card, the driver stays bound and unloads.
g1=$(guest probe <<'G'
t0=$(awk '{print $1}' /proc/uptime)
insmod $RS_MOD || fail "insmod"
usleep 5000000
sdhc_disk > /dev/null && fail "a card appeared although it never answers: $(sdhc_disk)"
[ "$(sdhc_driver)" = rust ] || fail "the Rust driver is not bound"
dmesg | grep -E 'mmc[0-9]' | tail -3
t1=$(awk '{print $1}' /proc/uptime)
rmmod meson_mx_sdhc_rs || fail "rmmod"
t2=$(awk '{print $1}' /proc/uptime)
say "dead card at probe: no card, rmmod after $(echo "$t1 $t2" | awk '{printf "%.2f", $2 - $1}') s"
G
)
echo "== card dead from power-on"
rc=0
emu --card emmc --size 16 --driver none --model fault-kind=resp-timeout \
    --model fault-probability-ppm=1000000 "$g1" || rc=1
grep '\[guest\]' "$T/serial.log"

# 2. Dies during I/O.
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
die) "$QMP" "\$EMU_QMP" faults resp-timeout ppm=1000000 ;;
revive) "$QMP" "\$EMU_QMP" faults none ;;
esac
HOST
chmod +x "$T/host.sh"
g2=$(guest io <<'G'
set -e
keep_data write || fail "initial write"
fio --name=busy --filename=$DEV --direct=1 --rw=randrw --bs=64k --offset=16m --size=16m \
    --time_based --runtime=120 --output-format=terse >/tmp/busy.out 2>&1 &
pid=$!
usleep 300000
host_sync die
t0=$(awk '{print $1}' /proc/uptime)
rc=0; wait $pid || rc=$?
t1=$(awk '{print $1}' /proc/uptime)
[ $rc != 0 ] || fail "fio reported success with a dead card"
el=$(echo "$t0 $t1" | awk '{printf "%d", $2 - $1}')
say "card died under fio: fio exit $rc after $el s (virtual): $(grep -o 'err=[0-9]*[^,]*' /tmp/busy.out | head -1)"
[ "$el" -lt 100 ] || fail "fio took $el s to see the dead card"
dmesg | grep -E 'mmc[0-9]|mmcblk[0-9]' | sed 's/^\[[ 0-9.]*\] //' | sort | uniq -c | sort -rn | head -5
rmmod meson_mx_sdhc_rs || fail "rmmod with a dead card"
host_sync revive
insmod $RS_MOD
wait_card 30 || fail "no card after the card answers again"
keep_data verify || fail "data does not verify"
say "card answers again: reloaded, the 8 MiB written before verify"
G
)
echo "== card dies during I/O"
emu --card emmc --size 64 --driver rust --host-script "$T/host.sh" "$g2" || rc=1
grep '\[guest\]' "$T/serial.log"
exit $rc
