# Sourced by .ci/test-load and .ci/test-flaky: start_hogs starts one busy
# loop per core, at the tests' own priority, and stops them when the script
# exits, however it exits (failure, ctrl-C, kill), so no hog outlives a run.
hogs=()
child=
stop_hogs() {
	for p in "${hogs[@]}" $child; do kill "$p" 2>/dev/null; done
	hogs=()
}
# run_child runs a command in the background and waits for it, so that a
# signal is handled at once (bash defers traps while a foreground command
# runs) and the command is stopped with the hogs.
run_child() {
	"$@" &
	child=$!
	wait "$child"
	local rc=$?
	child=
	return "$rc"
}
start_hogs() {
	trap stop_hogs EXIT
	# Bash runs the EXIT trap on exit; turn ctrl-C and kill into an exit.
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local cores
	cores="$(nproc)"
	for _ in $(seq 1 "$cores"); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	echo "== $cores busy loops started (pids ${hogs[*]})"
}
