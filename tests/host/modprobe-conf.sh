#!/usr/bin/env bash
# contrib/modprobe.d/meson_mx_sdhc_rs.conf against the driver's source
# (run-all: host-modprobe-conf):
#
#   1. the parameters: the names of the module!'s `params` block in
#      meson_mx_sdhc_rs.rs are exactly those the file describes (its
#      "#   name   text" list) and those its example options line sets;
#   2. the debugfs paths: every /sys/kernel/debug path the file names is
#      /sys/kernel/debug/<the MMC host's directory>/<file> with <file> one the
#      driver creates (stats.rs: read_only_file/read_write_file, not the test
#      knobs), and the kernel::mmc layer creates them in the host's directory
#      (host->debugfs_root, /sys/kernel/debug/mmcN);
#   3. the documentation: every paragraph of README.md and Documentation/*.rst
#      that lists the bounce parameters as the module's parameters (names
#      bounce_size, max_segs, bounce_cached and double_buffer within 300
#      characters after "module parameters", "modinfo -p" or "any of the
#      module's") also names the fifth and every other parameter.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
CONF=contrib/modprobe.d/meson_mx_sdhc_rs.conf
fail=0
bad() { echo "  FAILED: $*"; fail=1; }
ok() { echo "  ok: $*"; }

# --- 1. parameters ---------------------------------------------------------------
# The module! block: from "params: {" to the line closing it, entries
# "name: type {".
params=$(awk '/^module! *\{/ {m = 1} m && /^ *params: *\{/ {p = 1; d = 0}
    p { n = gsub(/\{/, "{"); c = gsub(/\}/, "}"); d += n - c
        if ($0 ~ /^ *[a-z_][a-z0-9_]*: *[A-Za-z0-9_]+ *\{/) { sub(/^ */, ""); sub(/:.*/, ""); print }
        if (d <= 0 && (n || c)) exit }' meson_mx_sdhc_rs.rs | sort)
[ -n "$params" ] || { echo "modprobe-conf: no params in the module! block of meson_mx_sdhc_rs.rs"; exit 1; }
echo "module! params: $(echo $params)"
described=$(sed -nE 's/^#   ([a-z_][a-z0-9_]*) {2,}.*/\1/p' "$CONF" | sort)
options=$(sed -nE 's/^#?options +meson_mx_sdhc_rs +//p' "$CONF" | tr ' ' '\n' | sed -n 's/=.*//p' | sort -u)
[ "$described" = "$params" ] && ok "the file describes exactly these: $(echo $described)" ||
    bad "the file describes '$(echo $described)', the module has '$(echo $params)'"
[ "$options" = "$params" ] && ok "its options line sets exactly these" ||
    bad "its options line sets '$(echo $options)', the module has '$(echo $params)'"
grep -qx 'blacklist meson_mx_sdhc' "$CONF" && ok "blacklist meson_mx_sdhc" || bad "no 'blacklist meson_mx_sdhc' line"

# --- 2. debugfs paths ----------------------------------------------------------------
files=$(sed -nE 's/.*dir\.read_(only|write)_file\(c"([a-z_]+)".*/\2/p' stats.rs | sort -u)
[ -n "$files" ] || bad "no debugfs files found in stats.rs"
grep -q 'debugfs_root' rust/kernel/mmc/debugfs.rs && grep -q '/sys/kernel/debug/mmcN/' rust/kernel/mmc/debugfs.rs &&
    ok "kernel::mmc creates the driver's files in the host's directory, /sys/kernel/debug/mmcN/: $(echo $files)" ||
    bad "rust/kernel/mmc/debugfs.rs does not say it uses host->debugfs_root (/sys/kernel/debug/mmcN/)"
n=0
while IFS= read -r p; do
    n=$((n + 1))
    # the host's directory: mmcN, mmc<number>, or $(basename .../mmc_host/mmc*)
    f=$(printf '%s\n' "$p" | sed -nE 's,^/sys/kernel/debug/(mmcN|mmc[0-9]+|\$\(basename /sys/bus/platform/devices/[0-9a-f]+\.mmc/mmc_host/mmc\*\))/([a-z_]+)$,\2,p')
    if [ -n "$f" ] && grep -qx -- "$f" <<< "$files"; then ok "path $p"
    else bad "path $p is not /sys/kernel/debug/mmcN/<one of: $(echo $files)>"; fi
done < <(perl -ne 'print "$&\n" while m{/sys/kernel/debug/(?:\$\([^)]*\)|[^\s\$])*}g' "$CONF")
[ "$n" -gt 0 ] || bad "the file names no /sys/kernel/debug path (where the values in effect are)"

# --- 3. the documentation's lists ------------------------------------------------------
for f in README.md Documentation/*.rst; do
    out=$(perl -00 -ne '
        BEGIN { @p = split / /, shift @ARGV }
        my @miss;
        while (/module parameters|modinfo -p|any of the module/g) {
            my $w = substr($_, $-[0], 300);
            next unless $w =~ /bounce_size/ && $w =~ /max_segs/ && $w =~ /bounce_cached/ && $w =~ /double_buffer/;
            for my $q (@p) { push @miss, $q unless $w =~ /\b\Q$q\E\b/ }
        }
        print "paragraph $.: lacks @miss\n" if @miss' "$(echo $params)" "$f")
    if [ -n "$out" ]; then bad "$f: $out"; fi
done
[ "$fail" = 0 ] && ok "README.md and Documentation/*.rst: every list of the module parameters names all $(echo "$params" | wc -l)"

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: modprobe-conf"
