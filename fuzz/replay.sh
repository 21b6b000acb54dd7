#!/usr/bin/env bash
# Replays every committed corpus file (fuzz/corpus/<target>/*) through its fuzz target's
# body on the stable toolchain: no libFuzzer, no nightly. Fails if any file panics (a crash
# found by fuzzing and saved to the corpus regressed). For CI:
#   fuzz/replay.sh
# which is:
#   cargo test --manifest-path fuzz/Cargo.toml --lib
set -euo pipefail
cd "$(dirname "$0")"
exec cargo test --manifest-path Cargo.toml --lib "$@"
