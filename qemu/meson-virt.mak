# qemu-system-arm for the emulated Meson8b board: virt + our SDHC and SDIO
# (SD card slot) models.
CONFIG_ARM_VIRT=y
CONFIG_MESON_MX_SDHC=y
CONFIG_MESON_MX_SDIO=y
# virtio-blk on virt's virtio-mmio transports: the disk from which U-Boot's
# qemu_arm build loads the board kit's boot scripts (tests/host/uboot-script.sh)
CONFIG_VIRTIO_BLK=y
