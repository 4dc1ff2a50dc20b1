#!/usr/bin/env bash
# sdio-c's cases (every sdio_test case, the controller's DAT1 sampling, the
# firmware download without MANUAL_STOP) on the Rust driver, with its SDIO
# card interrupts (sdio_irq=1, the default): 0 mismatched bytes, 0 errors,
# raised = delivered, 0 kernel reports.
SDIO_DRIVER=rust
. "$(dirname "$0")/sdio-c.sh"
