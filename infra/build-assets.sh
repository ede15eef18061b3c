#!/usr/bin/env bash
# The files the compiled code reads beside itself at run time, copied to the same places under the output
# directory that they have in the tree (the code finds them relative to its own module: shared/db/migrate.ts,
# shared/datasets.ts, shared/ai/spam/model-file.ts). Run by `npm run build` after tsc.
#   infra/build-assets.sh [outDir, default dist]   (from the tree's root)
set -euo pipefail
out="${1:-dist}"
mkdir -p "$out/shared/db" "$out/shared/ai"
rm -rf "$out/shared/db/migrations" "$out/shared/ai/models" "$out/data"
cp -R shared/db/migrations "$out/shared/db/migrations"
cp -R shared/ai/models "$out/shared/ai/models"
cp -R data "$out/data"
