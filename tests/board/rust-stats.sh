#!/usr/bin/env bash
# The Rust driver's debugfs statistics against the model's counters: a 128 MiB
# sequential read at bs=128k with the default bounce buffer (512 KiB, 64
# segments) must take at most 1100 data commands (the C driver needs 32768),
# and the driver's own counts (data requests, bytes, size histogram) must
# equal the model's for the same I/O.  Writing to the file resets it.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
reset) "$QMP" "\$EMU_QMP" reset-stats ;;
done) "$QMP" "\$EMU_QMP" stats > "$T/model.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
D=$(rs_debugfs)
[ -r "$D/stats" ] || fail "no $D/stats"
sed 's/^/[limits] /' "$D/limits"
host_sync reset
echo reset > "$D/stats"
n=$(sed -n 's/^data_requests: //p' "$D/stats")
[ "$n" = 0 ] || fail "data_requests is $n after a reset"
fio --name=r --filename=$DEV --direct=1 --rw=read --bs=128k --size=128m --output-format=terse >/tmp/fio.out \
  || { cat /tmp/fio.out; fail "fio read"; }
say "fio: $(cut -d';' -f7-9 /tmp/fio.out) (KiB/s;IOPS;ms)"
sed 's/^/[stats] /' "$D/stats"
host_sync done
G
)
emu --card emmc --size 256 --driver rust --host-script "$T/host.sh" "$g"
grep -E '^\[(guest|limits)\]' "$T/serial.log"
python3 - "$T/model.json" "$T/serial.log" <<'P'
import json, sys
m = json.load(open(sys.argv[1]))
st = {}
for line in open(sys.argv[2], errors="replace"):
    if line.startswith("[stats] "):
        k, v = line[8:].strip().split(": ")
        st[k] = int(v)
print("model:", m)
print("driver:", {k: v for k, v in st.items() if v})
ok = True
def want(what, got, exp, cmp=lambda g, e: g == e, rel="expected"):
    global ok
    good = cmp(got, exp)
    ok = ok and good
    print("  %s: %s = %s (%s %s)" % ("ok" if good else "FAILED", what, got, rel, exp))
want("model: bytes read", m["bytes_read"], 128 << 20)
want("model: data commands", m["data_commands"], 1100, lambda g, e: g <= e, "at most")
want("driver: data_requests = model data commands", st["data_requests"], m["data_commands"])
want("driver: bytes_read = model bytes read", st["bytes_read"], m["bytes_read"])
want("driver: bytes_written", st["bytes_written"], m["bytes_written"])
want("driver: direct + bounced", st["direct"] + st["bounced"], st["data_requests"])
errs = sum(v for k, v in st.items() if k.startswith("error_"))
want("driver: errors", errs, 0)
# The model counts exact transfer sizes; the driver, powers of two.
def bucket(n):
    b = 512
    while b < n and b < 4 << 20:
        b *= 2
    return b
mh = {}
for size, count in m["size_histogram"].items():
    mh[bucket(int(size))] = mh.get(bucket(int(size)), 0) + count
dh = {int(k[5:]): v for k, v in st.items() if k.startswith("size_") and v}
want("driver size histogram = model's (bucketed)", dh, mh)
avg = m["bytes_read"] / max(m["data_commands"], 1) / 1024
print("128 MiB read at bs=128k: %d data commands, %.1f KiB average (C driver: 32768 of 4 KiB)"
      % (m["data_commands"], avg))
sys.exit(0 if ok else 1)
P
