#!/usr/bin/env bash
# The model's counters over QMP: reset from the host, a known amount of I/O
# in the guest, exact counts back on the host (C driver: one 4 KiB data
# command per block-layer request at bs=4k).
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
reset) "$QMP" "\$EMU_QMP" reset-stats ;;
read4k) "$QMP" "\$EMU_QMP" stats > "$T/after4k.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
write128k) "$QMP" "\$EMU_QMP" stats > "$T/after128k.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
host_sync reset
fio --name=r --filename=/dev/mmcblk0 --direct=1 --rw=read --bs=4k --size=16m --output-format=terse >/dev/null
host_sync read4k
fio --name=w --filename=/dev/mmcblk0 --direct=1 --rw=write --bs=128k --size=8m --output-format=terse >/dev/null
host_sync write128k
G
)
emu --card emmc --size 64 --driver c --host-script "$T/host.sh" "$g"
python3 - "$T/after4k.json" "$T/after128k.json" <<'P'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
print("after a 16 MiB read at bs=4k:", a)
print("after an 8 MiB write at bs=128k:", b)
ok = True
def want(what, got, exp):
    global ok
    flag = "ok" if got == exp else "FAILED"
    if got != exp:
        ok = False
    print("  %s: %s = %s (expected %s)" % (flag, what, got, exp))
want("bytes read", a["bytes_read"], 16 << 20)
want("read data commands", a["read_commands"], 4096)
want("4 KiB transfers", a["size_histogram"].get("4096"), 4096)
want("bytes written", b["bytes_written"], 8 << 20)
want("bytes read during the write", b["bytes_read"], 0)
want("histogram total = data commands", sum(b["size_histogram"].values()), b["data_commands"])
sys.exit(0 if ok else 1)
P
