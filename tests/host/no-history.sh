#!/usr/bin/env bash
# The tracked files describe the project as it is, not the history of its
# work (run-all: host-no-history).  Fails, naming file:line, on:
#
#   1. a numbered work period: the word "session" followed by a number (also
#      capitalised, possessive, hyphenated or as a range of numbers);
#   2. an internal issue number: the word "issue" followed by a number (also
#      hyphenated or plural) or a bare "#" and a number after a space or an
#      opening bracket;
#   3. a numbered internal seed (the project's brief files: "seed" and a
#      zero-padded number such as 001); name the source instead, e.g. the RFC
#      patch's published S805 figures;
#   4. words that tell the history of the work: "previously", "now fixed",
#      "fixed in" and a commit, "an earlier version of this" (a result may
#      name the commit that produced it, and the commit that made a rule).
#
# Allowed (not ours, or not history):
#   - another project's issue: the word right before "issue"/"#" (on the same
#     line) names that project: a URL, an owner/repository, or one of
#     upstream, QEMU, Linux, kernel, Debian, LLVM, Rust, rustc, U-Boot, fio,
#     dkms, busybox, bindgen;
#   - fault seeds, which are parameters, not references: fault-seed,
#     seed=N, "seed 42", SOAK_SEED (only zero-padded numbers are flagged);
#   - this file, which has to spell the patterns out.
#
# A result names the commit and the command that produced it instead of the
# period in which it was measured.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
self=tests/host/no-history.sh
files=$(git ls-files -z | tr '\0' '\n' | grep -vxF "$self") ||
    { echo "no-history: git ls-files failed (not a git checkout?)"; exit 1; }
# grep narrows to candidate lines (binary files skipped); perl applies the rules.
hits=$(printf '%s\n' "$files" | tr '\n' '\0' |
    xargs -0 grep -nIHE '[Ss]essions?[- ]?[0-9]|[Ii]ssues?[- ]?#?[0-9]|(^|[[:space:](\[])#[0-9]|[Ss]eed 0[0-9]|[Pp]reviously|[Nn]ow fixed|[Ff]ixed in [0-9a-f]{7}|[Aa]n earlier version of this' -- 2>/dev/null |
    perl -ne '
        my ($file, $line, $text) = /^(.*?):(\d+):(.*)$/ or next;
        my $other = qr{^(?:\S*://\S*|[\w.-]+/[\w.-]+|upstream|qemu|linux|kernel|debian|llvm|rust|rustc|u-boot|fio|dkms|busybox|bindgen)(?:\x27s)?$}i;
        my @why;
        push @why, "work period \"$1\"" while $text =~ /\b([Ss]essions?[- ]?[0-9]+)/g;
        while ($text =~ /(\S*)\s*\b([Ii]ssues?[- ]?#?[0-9]+)/g) {
            my ($before, $what) = ($1, $2);
            $before =~ s/^[(\[]+//;
            push @why, "internal issue \"$what\"" unless $before =~ $other;
        }
        while ($text =~ /(\S*)(?:^|[\s(\[])(#[0-9]+)\b/g) {
            my ($before, $what) = ($1, $2);
            $before =~ s/^[(\[]+//;
            push @why, "internal issue \"$what\"" unless $before =~ $other;
        }
        push @why, "numbered seed \"$1\"" while $text =~ /\b([Ss]eed 0[0-9]+)\b/g;
        push @why, "history \"$1\"" while $text =~ /\b([Pp]reviously|[Nn]ow fixed|[Ff]ixed in [0-9a-f]{7}|[Aa]n earlier version of this)\b/g;
        print "$file:$line: ", join(", ", @why), ": ", substr($text =~ s/^\s+//r, 0, 120), "\n" if @why;
    ') || true
if [ -n "$hits" ]; then
    echo "$hits"
    echo "no-history: $(printf '%s\n' "$hits" | wc -l) line(s) refer to work periods, internal issues, seeds or the history of the work"
    echo "(say what is, and give the commit and the command that produced a result; header of $self)"
    exit 1
fi
echo "no-history: $(printf '%s\n' "$files" | wc -l) tracked files, no work periods or internal issue numbers"
