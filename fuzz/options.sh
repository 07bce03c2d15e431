# Sourced by bench/fuzz.sh and fuzz/run_smoke.sh: fuzz_options NAME FUZZ_DIR
# prints the libFuzzer flags of fuzz/NAME.options, one a line. The file is in
# ClusterFuzz's format ("[libfuzzer]" then "max_len = 1024" lines); a target
# without one runs on libFuzzer's defaults.
fuzz_options() {
  local file="$2/$1.options"
  [ -f "$file" ] || return 0
  sed -n 's/^[[:space:]]*\([a-z_]*\)[[:space:]]*=[[:space:]]*\([^[:space:]]*\)[[:space:]]*$/-\1=\2/p' "$file"
}
