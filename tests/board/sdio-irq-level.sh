#!/usr/bin/env bash
# sdio-irq with the model latching DAT1 again while the card holds it low
# (dat1-latch=level, the kinder reading; the default is edge), also while the
# driver has DAT1 masked (dat1-latch-masked=true; the default is false): the
# same checks, each interrupt allowed one handler call that finds nothing
# pending, the driver's probe saying level.
DAT1_LATCH=level DAT1_LATCH_MASKED=true TEST_NAME=sdio-irq-level exec bash "$(dirname "$0")/sdio-irq.sh"
