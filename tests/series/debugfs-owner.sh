#!/usr/bin/env bash
# make series-test only (needs the kernel built from the upstream series with the Rust debugfs
# samples as modules, EMU_KERNEL/EMU_GUEST): a debugfs file of a Rust module held open keeps
# the module loaded (the files' operations name their module as owner).  For each sample
# module, a file is held open by a process: rmmod is refused while it is open (the module's
# reference count is 1), then the file is closed and rmmod succeeds.
#   - rust_debugfs: "counter", a file of a debugfs::Dir (Dir::read_write_file), with the
#     driver bound to the board's fw-cfg platform device through driver_override (the sample
#     matches ACPI only);
#   - rust_debugfs_scoped: "control/create", a callback file of a ScopedDir
#     (ScopedDir::write_only_callback_file), held open for writing.
# Without the owner, rmmod succeeds while the file is open and closing it runs the release
# through the unloaded module's memory: an oops, which emu-run reports.
. "$(dirname "$0")/../lib.sh"
[ -n "${EMU_KERNEL:-}" ] || { echo "EMU_KERNEL is not set: run scripts/series-test"; exit 2; }
g=$(guest debugfs-owner <<'G'
D=/sys/kernel/debug
# held MODULE FILE r|w: FILE held open (for reading or for writing) by a process while
# rmmod MODULE is tried, then closed; rmmod must succeed then.
held() {
  if [ "$3" = r ]; then sleep 600 <"$2" & else sleep 600 >>"$2" & fi
  pid=$!
  usleep 300000
  ls -l /proc/$pid/fd/ | grep -q "$2" || fail "$2 is not open"
  ref=$(cat /sys/module/$1/refcnt)
  if rmmod $1 2>/tmp/rmmod.err; then
    kill $pid; wait $pid 2>/dev/null
    fail "rmmod $1 succeeded while $2 was open (reference count $ref)"
  fi
  [ "$ref" = 1 ] || fail "$1's reference count is $ref with $2 open, not 1"
  say "$2 open: $1's reference count 1, rmmod refused ($(cat /tmp/rmmod.err))"
  kill $pid; wait $pid 2>/dev/null
  rmmod $1 || fail "rmmod $1 refused after $2 was closed"
  [ ! -e "$2" ] || fail "$2 still there after rmmod $1"
  say "$2 closed: rmmod $1 done"
}

insmod /lib/modules/rust_debugfs.ko || fail "insmod rust_debugfs"
dev=$(basename "$(dirname "$(grep -l 'qemu,fw-cfg-mmio' /sys/bus/platform/devices/*/modalias | head -1)")")
[ -n "$dev" ] || fail "no fw-cfg platform device to bind rust_debugfs to"
echo rust_debugfs > /sys/bus/platform/devices/$dev/driver_override
echo $dev > /sys/bus/platform/drivers/rust_debugfs/bind || fail "binding rust_debugfs to $dev"
[ "$(cat $D/sample_debugfs/counter)" = 91 ] || fail "sample_debugfs/counter: $(cat $D/sample_debugfs/counter)"
held rust_debugfs $D/sample_debugfs/counter r

insmod /lib/modules/rust_debugfs_scoped.ko || fail "insmod rust_debugfs_scoped"
echo "d 7 8" > $D/rust_scoped_debugfs/control/create || fail "writing control/create"
[ "$(cat $D/rust_scoped_debugfs/dynamic/d/1)" = 8 ] || fail "rust_scoped_debugfs/dynamic/d/1"
held rust_debugfs_scoped $D/rust_scoped_debugfs/control/create w
say "@@DEBUGFS-OWNER done"
G
)
rc=0
emu --card emmc --size 16 --driver none "$g" || rc=1
grep -E '\[guest\]' "$T/serial.log"
grep -q '@@DEBUGFS-OWNER done' "$T/serial.log" || rc=1
exit $rc
