#!/usr/bin/env bash
# sdio-irq with the model latching DAT1 again while the card holds it low
# (dat1-latch=level, the kinder reading; the default is edge): the same
# checks, each interrupt allowed one handler call that finds nothing pending.
DAT1_LATCH=level TEST_NAME=sdio-irq-level exec bash "$(dirname "$0")/sdio-irq.sh"
