#!/usr/bin/env bash
# The model's counters over QMP: reset from the host, a known amount of I/O
# in the guest, exact counts back on the host (C driver: one 4 KiB data
# command per block-layer request at bs=4k).
#
# Then a 16 MiB sequential read at bs=128k with each driver: the C driver
# gets 4 KiB requests (one segment each, 4096 data commands); the Rust driver
# with its default bounce buffer (512 KiB, 64 segments) must need at most
# 16 MiB / 128 KiB * 1.1 data commands.
#
# The guest's own view of the counters (model_counters, the model's counter
# window read with devmem) must equal what the host reads over QMP at the
# same point.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
reset) "$QMP" "\$EMU_QMP" reset-stats ;;
read4k) "$QMP" "\$EMU_QMP" stats > "$T/after4k.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
write128k) "$QMP" "\$EMU_QMP" stats > "$T/after128k.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
read128k) "$QMP" "\$EMU_QMP" stats > "$T/\$EMU_DRV.read128k.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
if [ "$EMU_DRIVER" = c ]; then
  host_sync reset
  fio --name=r --filename=$DEV --direct=1 --rw=read --bs=4k --size=16m --output-format=terse >/dev/null
  host_sync read4k
  fio --name=w --filename=$DEV --direct=1 --rw=write --bs=128k --size=8m --output-format=terse >/dev/null
  host_sync write128k
else
  host_sync reset
fi
fio --name=r --filename=$DEV --direct=1 --rw=read --bs=128k --size=16m --output-format=terse >/dev/null
echo "@@GUEST-COUNTERS $(model_counters)"
host_sync read128k
G
)
for drv in c rust; do
  EMU_DRV=$drv emu --card emmc --size 64 --driver $drv --host-script "$T/host.sh" "$g"
  grep '^@@GUEST-COUNTERS' "$T/serial.log" > "$T/$drv.guest" || { echo "FAILED: no guest counters"; exit 1; }
done
python3 - "$T/after4k.json" "$T/after128k.json" "$T/c.read128k.json" "$T/rust.read128k.json" "$T/c.guest" "$T/rust.guest" <<'P'
import json, sys
a, b, c, r = (json.load(open(f)) for f in sys.argv[1:5])
guest = {}
for drv, f in (("c", sys.argv[5]), ("rust", sys.argv[6])):
    v = [int(x) for x in open(f).read().split()[1:]]
    guest[drv] = dict(zip(("commands", "data_commands", "bytes_read", "bytes_written", "faults"), v))
print("C driver, after a 16 MiB read at bs=4k:", a)
print("C driver, after an 8 MiB write at bs=128k:", b)
print("C driver, after a 16 MiB read at bs=128k:", c)
print("Rust driver (default params), after a 16 MiB read at bs=128k:", r)
ok = True
def want(what, got, exp, cmp=lambda g, e: g == e, rel="expected"):
    global ok
    good = cmp(got, exp)
    ok = ok and good
    print("  %s: %s = %s (%s %s)" % ("ok" if good else "FAILED", what, got, rel, exp))
want("bytes read", a["bytes_read"], 16 << 20)
want("read data commands", a["read_commands"], 4096)
want("4 KiB transfers", a["size_histogram"].get("4096"), 4096)
want("bytes written", b["bytes_written"], 8 << 20)
want("bytes read during the write", b["bytes_read"], 0)
want("histogram total = data commands", sum(b["size_histogram"].values()), b["data_commands"])
want("C, bs=128k: bytes read", c["bytes_read"], 16 << 20)
want("C, bs=128k: read data commands", c["read_commands"], 4096)
want("Rust, bs=128k: bytes read", r["bytes_read"], 16 << 20, lambda g, e: g >= e, "at least")
limit = int((16 << 20) / (128 << 10) * 1.1)
want("Rust, bs=128k: data commands", r["data_commands"], limit, lambda g, e: g <= e, "at most")
for drv, host in (("c", c), ("rust", r)):
    g = guest[drv]
    print("%s driver: guest's counters %s" % (drv, g))
    for k in ("commands", "data_commands", "bytes_read", "bytes_written"):
        want("%s: %s read by the guest = by the host" % (drv, k), g[k], host[k])
    want("%s: faults read by the guest = by the host" % drv, g["faults"], sum(host["faults"].values()))
print("data commands for a 16 MiB read at bs=128k: C %d, Rust %d" % (c["data_commands"], r["data_commands"]))
sys.exit(0 if ok else 1)
P
