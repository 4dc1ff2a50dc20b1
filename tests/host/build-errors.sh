#!/usr/bin/env bash
# Builds that must fail (run-all: host-build-errors): a hole of kernel::mmc closed by
# construction stays closed only while misusing it does not build.  Each case is a copy of
# the sources with one change, built against the test kernel; the build must fail, and for
# the reason the case names (not for another):
#
#   sdio-signal-without-ack  the driver's HostOps without ack_sdio_irq, while probe still
#                            asks for an SDIO interrupt signal (UnregisteredHost::
#                            sdio_irq_signal): the core would call the missing callback for
#                            every interrupt, so the layer's build_error! must stop the build
#                            (modpost: rust_build_error undefined).
#   host-data-borrows        a host whose driver data borrows a local registered: the
#                            registration lasts until the parent is unbound (devres), so
#                            the data must borrow nothing (E0597, the local "borrowed for
#                            'static" by register()'s `T: 'static`).
#   irq-handler-borrows      the same for an interrupt handler requested through
#                            kernel::irq::managed.
#   layer-misuse             calls the layer's types leave out, each in one line marked
#                            "// misuse", all in one build (rustc reports each of them):
#                            PreReqRequest::pre_map from post_req (a mapping nothing would
#                            undo: E0599, no method `pre_map` on PostReqRequest), and
#                            Timer::stop from the timer's handler (it would wait for itself:
#                            E0599, no method `stop` on TimerRef), and a CPU write into cached
#                            DMA pages but through NoncoherentPages::cpu_write()'s view (the
#                            next mapping could skip the clean the write needs: E0277,
#                            NoncoherentPages is no CpuBufferMut), a mapping of those pages
#                            without the bound device (one could be made after the unbinding:
#                            E0308, a &Device is no &Device<Bound>), and a host on a device
#                            that is no of_child::Child (nothing would keep it registered while
#                            the host is: E0308).
# and a build that must succeed, so that the others fail for the borrow or the misuse alone:
#   static-data-builds       both, with data that borrows a `static`, and the layer-misuse
#                            file without its "// misuse" lines.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/build-errors.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0

# copy_tree DIR: the sources and scripts a module build needs, as they are in the work tree
copy_tree() {
    mkdir -p "$1"
    (cd "$TOP" && tar cf - --exclude=./build --exclude=./tests --exclude=./.git \
        --exclude='*.ko' --exclude='*.o' --exclude='*.mod*' --exclude=Module.symvers \
        --exclude=modules.order .) | (cd "$1" && tar xf -)
}

# must_fail NAME EXPECTED...: builds $T/NAME, which must fail with each EXPECTED in its output
must_fail() {
    local name=$1 log="$T/$1.log" e
    shift
    if "$T/$name/scripts/build-module.sh" > "$log" 2>&1; then
        echo "  FAILED: $name: built"
        fail=1
        return
    fi
    for e in "$@"; do
        if grep -q -- "$e" "$log"; then
            echo "  ok: $name: does not build ($(grep -m1 -o -- "$e.*" "$log" | cut -c1-100))"
        else
            echo "  FAILED: $name: failed, but not with '$e':"
            grep -A8 '^error' "$log" | head -n 40 | sed 's/^/    | /'
            fail=1
        fi
    done
}

copy_tree "$T/sdio-signal-without-ack"
python3 - "$T/sdio-signal-without-ack/host_ops.rs" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
cb = re.search(r'\n    fn ack_sdio_irq\(.*?\n    }\n', s, re.S)
if not cb:
    sys.exit("host_ops.rs: no ack_sdio_irq callback to remove")
open(p, "w").write(s[:cb.start()] + "\n" + s[cb.end():])
PY
# What only the removed callback used (its test-knob path) is dead code now: allowed in the copy,
# so that the build gets as far as the check under test.
python3 - "$T/sdio-signal-without-ack/meson_mx_sdhc_rs.rs" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
m = re.search(r'^(use |mod |#\[)', s, re.M)
open(p, "w").write(s[:m.start()] + "#![allow(dead_code)]\n\n" + s[m.start():])
PY
! grep -q "fn ack_sdio_irq" "$T/sdio-signal-without-ack/host_ops.rs" || { echo "  FAILED: ack_sdio_irq still there"; exit 1; }
grep -q "sdio_irq_signal()" "$T"/sdio-signal-without-ack/*.rs ||
    { echo "  FAILED: the driver no longer asks for a signal: the case tests nothing"; exit 1; }
must_fail sdio-signal-without-ack "rust_build_error"

# add_to_probe NAME: appends stdin to the copy's probe.rs (with dead code allowed, so that the
# build fails only for the borrow)
add_to_probe() {
    copy_tree "$T/$1"
    { echo; echo "#[allow(dead_code)]"; echo "mod borrowing {"; cat; echo "}"; } >> "$T/$1/probe.rs"
}

add_to_probe host-data-borrows <<'RS'
    use crate::mmc::{Host, HostOps, Ios, Request, UnregisteredHost};
    use kernel::{device::{Bound, Device}, prelude::*};

    struct Borrowing<'a>(&'a u32);

    #[vtable]
    impl HostOps for Borrowing<'_> {
        fn request(_host: &Host<Self>, _mrq: Request) {}
        fn set_ios(_host: &Host<Self>, _ios: &Ios) {}
    }

    fn probe(dev: &Device<Bound>) -> Result {
        let local = 0u32;
        let host = UnregisteredHost::new(dev, Ok::<_, Error>(Borrowing(&local)))?;
        let registered = host.register();
        registered.map(|_| ())
    }
RS
must_fail host-data-borrows "argument requires that \`local\` is borrowed for \`'static\`"

add_to_probe irq-handler-borrows <<'RS'
    use crate::kernel_ext::irq::managed;
    use kernel::{device::Bound, irq::{Flags, IrqReturn, ThreadedHandler}, platform, prelude::*};

    struct Borrowing<'a>(&'a u32);

    impl ThreadedHandler for Borrowing<'_> {
        fn handle_threaded(&self) -> IrqReturn {
            IrqReturn::None
        }
    }

    fn probe(pdev: &platform::Device<Bound>) -> Result {
        let local = 0u32;
        let handler = Ok::<_, Error>(Borrowing(&local));
        let requested = managed::request_threaded_irq_by_index(pdev, Flags::ONESHOT, 0, c"x", handler);
        requested
    }
RS
must_fail irq-handler-borrows "argument requires that \`local\` is borrowed for \`'static\`"
# The layer-misuse file: what the layer allows, with one misuse per "// misuse" line.
cat > "$T/misuse.rs" <<'RS'
    use crate::kernel_ext::dma::{cpu_copy, noncoherent::{MapSync, NoncoherentPages}};
    use crate::kernel_ext::platform::of_child::Child;
    use crate::kernel_ext::workqueue::timer::{TimerHandler, TimerRef};
    use crate::mmc::{Host, HostOps, Ios, PostReqRequest, PreReqRequest, Request, UnregisteredHost};
    use kernel::{device::{Bound, Device}, dma::DataDirection, prelude::*, time::Delta};

    struct Misuse;

    #[vtable]
    impl HostOps for Misuse {
        fn request(_host: &Host<Self>, _mrq: Request) {}
        fn set_ios(_host: &Host<Self>, _ios: &Ios) {}
        fn pre_req(_host: &Host<Self>, mrq: &PreReqRequest) {
            mrq.pre_map();
        }
        fn post_req(_host: &Host<Self>, _mrq: &PostReqRequest, _error: Option<Error>) {
            let _ = _mrq.data();
            _mrq.pre_map(); // misuse
        }
    }

    impl TimerHandler for Misuse {
        fn expired(_timer: &TimerRef<Self>) {
            _timer.arm_if_idle(Delta::from_millis(1));
            _timer.stop(); // misuse
        }
    }

    fn mark(pages: &NoncoherentPages) -> Result {
        let view = pages.cpu_write(0, 4)?;
        cpu_copy::write_buffer_word(&view, 0, 1)?;
        drop(view);
        cpu_copy::write_buffer_word(pages, 0, 1)?; // misuse
        Ok(())
    }

    fn map(pages: &NoncoherentPages, bound: &Device<Bound>, _dev: &Device) -> Result {
        pages.unmap(pages.map(bound, 0, 4, DataDirection::ToDevice, MapSync::Always)?)?;
        pages.unmap(pages.map(_dev, 0, 4, DataDirection::ToDevice, MapSync::Always)?)?; // misuse
        Ok(())
    }

    fn slot_host(child: &Child<'_>, _dev: &Device) -> Result {
        let _host = UnregisteredHost::<Misuse>::new_for_child(child, Ok::<_, Error>(Misuse))?;
        let _host = UnregisteredHost::<Misuse>::new_for_child(_dev, Ok::<_, Error>(Misuse))?; // misuse
        Ok(())
    }
RS
[ "$(grep -c '// misuse$' "$T/misuse.rs")" = 5 ] ||
    { echo "  FAILED: the layer-misuse file has not one misuse per case"; exit 1; }
add_to_probe layer-misuse < "$T/misuse.rs"
must_fail layer-misuse "no method named \`pre_map\` found for reference \`&PostReqRequest\`" \
    "no method named \`stop\` found for reference \`&[a-z:]*TimerRef<" \
    "[a-z_:]*NoncoherentPages: [a-z_:]*CpuBufferMut\` is not satisfied\|CpuBufferMut\` is not implemented for \`[a-z_:]*NoncoherentPages\`" \
    "expected \`&[A-Za-z_:]*Device<[A-Za-z_:]*Bound>\`, found \`&[A-Za-z_:]*Device\`" \
    "expected \`&[A-Za-z_:]*Child<'_>\`, found \`&[A-Za-z_:]*Device\`"

add_to_probe static-data-builds <<'RS'
    use crate::kernel_ext::irq::managed;
    use crate::mmc::{Host, HostOps, Ios, Request, UnregisteredHost};
    use kernel::{device::Bound, irq::{Flags, IrqReturn, ThreadedHandler}, platform, prelude::*};

    static SHARED: u32 = 0;

    struct Borrowing<'a>(&'a u32);

    #[vtable]
    impl HostOps for Borrowing<'_> {
        fn request(_host: &Host<Self>, _mrq: Request) {}
        fn set_ios(_host: &Host<Self>, _ios: &Ios) {}
    }

    impl ThreadedHandler for Borrowing<'_> {
        fn handle_threaded(&self) -> IrqReturn {
            IrqReturn::None
        }
    }

    fn probe(pdev: &platform::Device<Bound>) -> Result {
        let handler = Ok::<_, Error>(Borrowing(&SHARED));
        managed::request_threaded_irq_by_index(pdev, Flags::ONESHOT, 0, c"x", handler)?;
        let host = UnregisteredHost::new(pdev.as_ref(), Ok::<_, Error>(Borrowing(&SHARED)))?;
        host.register()?;
        Ok(())
    }
RS
{ echo; echo "#[allow(dead_code)]"; echo "mod layer_use {"; grep -v '// misuse$' "$T/misuse.rs"; echo "}"; } \
    >> "$T/static-data-builds/probe.rs"
if "$T/static-data-builds/scripts/build-module.sh" > "$T/static-data-builds.log" 2>&1; then
    echo "  ok: static-data-builds: builds"
else
    echo "  FAILED: static-data-builds: does not build:"
    grep -m5 -A5 "^error" "$T/static-data-builds.log" | sed 's/^/    | /'
    fail=1
fi
exit $fail
