# shellcheck shell=bash
# Sourced by scripts/setup.sh: the apt files it adds, compared whole.
#
# A file is rewritten whenever its content differs from what this release
# wants, so that nothing of an earlier release's choice survives an upgrade.
# A backports suite is pinned below its release (90, the release 100): a
# Debian 12 pin file pins trixie itself too, and during the upgrade to
# Debian 13 (before make setup runs again) trixie is then the system's own
# release at 100, above trixie-backports, never tied with it; a tie would
# let apt upgrade every package with a backports version to it
# (tests/host/setup-files.sh).

# apt_pin_text SUITE...: a preferences file pinning each suite to 100, a
# backports suite to 90, so that apt takes from them only what is asked for
# by name or version and is nowhere else, and upgrades nothing installed to
# a backports version
apt_pin_text() {
    local s p
    echo "# meson_mx_sdhc_rs: take only what is asked for from these suites."
    for s in "$@"; do
        case "$s" in *-backports) p=90 ;; *) p=100 ;; esac
        printf 'Package: *\nPin: release n=%s\nPin-Priority: %s\n\n' "$s" "$p"
    done
}

# apt_sources_text URI ADDED SRC: deb and deb-src of the suites ADDED, deb-src
# of the suites SRC (space-separated lists), from mirror URI
apt_sources_text() {
    cat <<EOS
Types: deb deb-src
URIs: $1
Suites: $2
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $1
Suites: $3
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
}

# write_if_changed FILE TEXT: FILE holds exactly TEXT (and a newline)
# afterwards; status 0 if it was written, 1 if it already did
write_if_changed() {
    if [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; then return 1; fi
    printf '%s\n' "$2" > "$1.new"
    mv -f "$1.new" "$1"
}

# apt_suite_files RELEASE CODENAME URI SOURCES PIN: the sources file SOURCES
# and the preferences file PIN for this Debian RELEASE (12, 13, ...) and
# CODENAME, mirror URI.  Debian 12: trixie and trixie-backports (deb,
# deb-src), pinned to 100 and 90, and deb-src of bookworm.  Debian 13 and later:
# trixie-backports (deb, deb-src) at 90, deb-src of the release and of
# bookworm (whose fio source downloads where a newer one may not); the
# release's own suites keep their priority.  Status 0 if SOURCES changed
# (apt-get update is due).
apt_suite_files() {
    local rel=$1 codename=$2 uri=$3 src=$4 pin=$5 added src_suites changed=1
    if [ "$rel" = 12 ]; then added="trixie trixie-backports"; else added="trixie-backports"; fi
    src_suites=$codename
    [ "$codename" = bookworm ] || src_suites="$codename bookworm"
    if write_if_changed "$src" "$(apt_sources_text "$uri" "$added" "$src_suites")"; then
        log "added $added (deb, deb-src) and $src_suites (deb-src) from the system's mirror: $src"
        changed=0
    fi
    # shellcheck disable=SC2086 # a list of suites
    if write_if_changed "$pin" "$(apt_pin_text $added)"; then
        log "pinned $added (backports 90, the others 100): $pin"
    fi
    return $changed
}
