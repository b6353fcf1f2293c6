#!/usr/bin/env bash
# Short fuzz run of every target (the documented robustness check).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      default: 60 s, all targets
#
# cargo-fuzz needs nightly-only compiler flags; on the stable toolchain RUSTC_BOOTSTRAP=1
# unlocks them. AddressSanitizer works here; set SANITIZER=none where it does not.
# Each target starts from fuzz/seeds/<target> plus its regressions (corpus/ grows locally,
# untracked). A crash or hang leaves its input in fuzz/artifacts/<target>/: once fixed, copy
# it to fuzz/regressions/<target>/ so `cargo test --test fuzz_regressions` replays it.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
fi
export RUSTC_BOOTSTRAP=1
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  for d in seeds regressions; do
    if [ -d "$d/$t" ]; then cp -n "$d/$t"/* "corpus/$t/" 2>/dev/null || true; fi
  done
  echo "== $t ($secs s)"
  if cargo fuzz run -O --sanitizer "${SANITIZER:-address}" "$t" "corpus/$t" -- \
      -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len=4096 \
      -print_final_stats=1 2>"corpus/$t.log"; then
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "corpus/$t.log" || true
  else
    status=1
    echo "!! $t failed; see fuzz/corpus/$t.log and fuzz/artifacts/$t/" >&2
    grep -E "panicked|ERROR|SUMMARY" "corpus/$t.log" | head -5 >&2 || true
  fi
done
exit $status
