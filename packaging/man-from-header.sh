#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# packaging/man-from-header.sh SCRIPT SUMMARY [VERSION]: print a man page
# (section 8) for SCRIPT made of the comment block at its head, verbatim,
# so that `man srff-qdisc` and `man srff-check` say what the scripts' own
# headers say, and cannot drift from them. Used by debian/rules and
# packaging/local.sh.
set -euo pipefail
script=$1 summary=$2 version=${3:-}
name=${script##*/}
upper=$(tr '[:lower:]' '[:upper:]' <<<"$name")
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'; }

printf '.\\" Made by packaging/man-from-header.sh from the head of %s.\n' "$name"
printf '.TH %s 8 "" "srff%s" "System Administration"\n' "$(esc <<<"$upper")" "${version:+ $version}"
printf '.SH NAME\n%s \\- %s\n' "$(esc <<<"$name")" "$(esc <<<"$summary")"
printf '.SH DESCRIPTION\n.nf\n'
# The comment block after the shebang and the SPDX line, "# " taken off.
awk 'NR == 1 && /^#!/ { next }
	/^# SPDX/ { next }
	!/^#/ { exit }
	{ sub(/^# ?/, ""); print }' "$script" |
	sed '1{/^$/d}' | esc
# SEE ALSO: srff's other pages, then tc's.
printf '.fi\n.SH SEE ALSO\n'
for page in srff.8 srff.conf.5 srffctl.8 srff-qdisc.8 srff-check.8; do
	[ "$page" = "$name.8" ] || printf '.BR %s (%s),\n' "$(esc <<<"${page%.*}")" "${page##*.}"
done
printf '.BR tc (8),\n.BR tc\\-prio (8)\n'
