# shellcheck shell=bash
# shellcheck disable=SC2034  # GUEST_*: what the caller reads
# SPDX-License-Identifier: BSD-2-Clause
# The option parser of the soft-RoCE guest scripts (softroce-run.sh,
# softroce-2node.sh, softroce-guest.sh), sourced: one grammar for all
# three.
#
# guest_args NAME=VAR... -- ARGS...: sets VAR from "--NAME VALUE" or
# "--NAME=VALUE" for each NAME given, up to "--" (taken) or the first
# word that is no option (kept); the words left are in GUEST_REST, and
# GUEST_DASHED is 1 when "--" ended the options.  -h and --help set
# GUEST_HELP=1.  An unknown option, or one without its value: a message
# naming it, and status 2 (the caller prints its usage).
guest_args() {
	local -A var=()
	local spec name
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		var[${1%%=*}]=${1#*=}
		shift
	done
	shift
	GUEST_REST=() GUEST_DASHED=0 GUEST_HELP=0
	while [ $# -gt 0 ]; do
		case $1 in
		--) GUEST_DASHED=1; shift; break ;;
		-h | --help) GUEST_HELP=1; shift; continue ;;
		--*=*) name=${1%%=*} spec=${1#*=} ;;
		--*) name=$1 spec= ;;
		-*) name=$1 ;;
		*) break ;;
		esac
		name=${name#--}
		if [ -z "${var[$name]+set}" ]; then
			echo "${prog:-${0##*/}}: unknown option $1" >&2
			return 2
		fi
		if [ "$1" = "--$name" ]; then
			if [ $# -lt 2 ]; then
				echo "${prog:-${0##*/}}: --$name wants a value" >&2
				return 2
			fi
			spec=$2
			shift
		fi
		printf -v "${var[$name]}" '%s' "$spec"
		shift
	done
	GUEST_REST=("$@")
}
