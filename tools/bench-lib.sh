# Shared by tools/bench and tools/big-builds (sourced, not run).
#
# A row names a build: BOARD[-START][+none][+corners], e.g. 3x4, 3x4+none (no
# symmetry), 4x4+corners, 3x5-icelandic+corners. A row without +corners builds
# without them (--no-corners; tb's default reduces them where they help), so that
# each row means what it meant in earlier tables. Morris: `morris` (every table) or `morris-N`
# (tables up to N stones a side); `+all` adds the placement tables (`morris+all`:
# the whole game; started on a copy of morris.tb it builds only the placement);
# `+chunkN` stores chunks of N positions (e.g. morris+all+chunk2048). `lasker+all`: Lasker
# Morris from the empty board; `morabaraba+all`: Morabaraba from the empty board.
# Qubic: `qubic` (X's first move on a corner), `qubic-first-N` (on cell N).

# Prints the `tb build` arguments of a row (board, --start, reduction flags).
row_args() {
    local row="$1" spec flags board start
    case "$row" in
    *+chunk*)
        echo "$(row_args "${row%+chunk*}") --chunk ${row##*+chunk}"
        return
        ;;
    morris) echo "morris --memory 16GiB"; return ;;
    qubic) echo "qubic"; return ;;
    # X's first move on another cell (qubic-first-1: the seed's 4-line opening).
    qubic-first-*) echo "qubic --first ${row#qubic-first-}"; return ;;
    morris+all) echo "morris --phase all --memory 16GiB"; return ;;
    # Lasker Morris from the empty board (issue 47): ~17 hours on 2 cores, ~39 GiB.
    lasker+all) echo "morris --rules lasker --phase all --memory 16GiB"; return ;;
    # Morabaraba from the empty board (issue 47): ~8 hours on 2 cores, ~33 GiB.
    morabaraba+all) echo "morris --rules morabaraba --phase all --memory 16GiB"; return ;;
    morris-*+all)
        spec="${row#morris-}"
        echo "morris --stones ${spec%+all} --phase all --memory 16GiB"
        return
        ;;
    morris-*) echo "morris --stones ${row#morris-} --memory 16GiB"; return ;;
    esac
    spec="${row%%+*}"
    flags=""
    [ "$spec" = "$row" ] || flags="+${row#*+}"
    board="${spec%%-*}"
    start="empty"
    [ "$spec" = "$board" ] || start="${spec#*-}"
    echo "$board --start $start"
    case "$flags" in *+none*) echo "--symmetry none" ;; esac
    case "$flags" in *+corners*) echo "--corners" ;; *) echo "--no-corners" ;; esac
    case "$flags" in *+loony*) echo "--loony" ;; esac
}

# Markdown header matching row_markdown.
row_header() {
    echo "| build | stored positions | reduction | wall s | M positions/s | peak RSS MiB | peak disk MiB | bits/pos | book MiB | start value |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
}

# Reads a `tb build --json` summary on stdin and prints one Markdown row for $1.
# Wall time: $2 if given (seconds summed over every run of a resumed build), else
# the summary's wall time of its run.
row_markdown() {
    python3 -c '
import json, sys
s = json.load(sys.stdin)
secs = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else s["seconds"]
if "bytes_after" in s:  # a `tb recode --json` summary (a +archive row): chunk bytes
    print("| {row} | {pos} | recoded | {secs:.1f} | {pps:.2f} | - | - | {bits:.3f} | {mib:.1f} (chunks) | - |".format(
        row=sys.argv[1], pos=s["positions"], secs=secs, pps=s["positions"] / secs / 1e6,
        bits=s["bytes_after"] * 8 / s["positions"], mib=s["bytes_after"] / 2**20))
    sys.exit(0)
if s.get("game") == "morris":
    print("| {row} | {pos} | 16 sym (classes) | {secs:.1f} | {pps:.2f} | {rss:.0f} | {disk:.0f} | {bits:.3f} | {file:.1f} | - |".format(
        row=sys.argv[1], pos=s["total_positions"], secs=secs, pps=s["total_positions"] / secs / 1e6,
        rss=(s["peak_rss_bytes"] or 0) / 2**20, disk=s["peak_file_bytes"] / 2**20,
        bits=s["bits_per_position"], file=s["file_bytes"] / 2**20))
    sys.exit(0)
red = "{}{}".format(s["symmetry"] if s["symmetry"] != "none" else "", "+corners" if s["corners"] else "") or "none"
mark = {"mover": "v", "opponent": "^"}.get(s.get("loony"), "")
print("| {row} | {pos} | {factor:.2f}x {red} ({k} sym) | {secs:.1f} | {pps:.1f} | {rss:.0f} | {disk:.0f} | {bits:.3f} | {file:.1f} | {v:+d}{mark} |".format(
    row=sys.argv[1], pos=s["total_positions"], factor=s["raw_positions"] / s["total_positions"],
    red=red, k=s["symmetries"], secs=secs, pps=s["total_positions"] / secs / 1e6,
    rss=(s["peak_rss_bytes"] or 0) / 2**20, disk=s["peak_file_bytes"] / 2**20,
    bits=s["bits_per_position"], file=s["file_bytes"] / 2**20, v=s["start_value"], mark=mark))' "$@"
}
