# qemu-system-arm for the emulated Meson8b board: virt + our SDHC model.
CONFIG_ARM_VIRT=y
CONFIG_MESON_MX_SDHC=y
