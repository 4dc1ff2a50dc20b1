#!/usr/bin/env bash
# Probability-mode fault injection is reproducible: the same seed over the
# same workload injects the same faults (the guest runs under -icount), a
# different seed does not; and --image keeps a card between boots.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm) "$QMP" "\$EMU_QMP" reset-stats
     "$QMP" "\$EMU_QMP" faults mixed ppm=20000 seed=\$(cat "$T/seed") ;;
done) "$QMP" "\$EMU_QMP" stats > "$T/stats-\$(cat "$T/seed")-\$(cat "$T/run").json"
      "$QMP" "\$EMU_QMP" faults none ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
host_sync arm
fio --name=mix --filename=/dev/mmcblk0 --direct=1 --rw=randrw --bs=4k --size=2m \
    --randseed=7 --output-format=terse >/dev/null 2>&1 || say "fio saw I/O errors"
host_sync done
dd if=/dev/mmcblk0 of=/dev/null bs=64k count=1 2>/dev/null
G
)
for spec in 42:1 42:2 99:1; do
  echo "${spec%:*}" > "$T/seed"; echo "${spec#*:}" > "$T/run"
  emu --card emmc --size 16 --driver rust --host-script "$T/host.sh" "$g"
done
python3 - "$T" <<'P'
import json, sys
t = sys.argv[1]
a, b, c = (json.load(open("%s/stats-%s.json" % (t, k))) for k in ("42-1", "42-2", "99-1"))
print("seed 42, run 1:", a["faults"], "commands", a["commands"])
print("seed 42, run 2:", b["faults"], "commands", b["commands"])
print("seed 99:       ", c["faults"], "commands", c["commands"])
ok = a == b and sum(a["faults"].values()) > 0 and a["faults"] != c["faults"]
print("ok: same seed, same faults; another seed, others" if ok else "FAILED")
sys.exit(0 if ok else 1)
P
# --image: a card written in one boot is read back in the next
g1=$(guest w <<'G'
echo "meson-image-marker" | dd of=/dev/mmcblk0 bs=512 seek=100 conv=sync 2>/dev/null
G
)
g2=$(guest r <<'G'
dd if=/dev/mmcblk0 bs=512 skip=100 count=1 2>/dev/null | grep -q meson-image-marker || fail "marker not on the reused image"
say "marker found on the reused image"
G
)
emu --card sd --size 16 --driver c --image "$T/card.img" "$g1"
emu --card sd --size 16 --driver c --image "$T/card.img" "$g2"
echo "ok: --image reused"
