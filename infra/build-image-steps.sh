#!/usr/bin/env bash
# The image's build steps, as one script that runs the same inside `docker build` (infra/Dockerfile) and on a
# developer machine or CI (test/infra/build-image.test.ts runs it in a copy of the tree):
#   install  npm ci from package-lock.json (all dependencies: the type check needs the dev ones)
#   check    the TypeScript type check of the whole tree (tests and benchmarks included)
#   build    compile to dist/ with migrations, models and data beside it (what `npm run build` does)
#   prune    drop dev dependencies, leaving what the runtime stage copies
#   all      the four in order (default)
# Run from the tree's root (the Docker WORKDIR), or pass it as the second argument.
set -euo pipefail
step="${1:-all}"
cd "${2:-.}"

install() {
  # --prefer-offline: reuse the npm cache when it has the exact tarballs (CI and the test), else download.
  npm ci --include=dev --no-audit --no-fund --prefer-offline --loglevel=error
}
check() {
  npx --no-install tsc --noEmit -p tsconfig.json
}
build() {
  rm -rf dist
  npx --no-install tsc -p tsconfig.build.json
  bash infra/build-assets.sh dist
}
prune() {
  npm prune --omit=dev --no-audit --no-fund --loglevel=error
  # Nothing that only tests or builds need may remain (typescript stays: valibot, under bull-board, has it as
  # an optional peer, and npm keeps installed optional peers).
  for dev in vitest eslint playwright-core drizzle-kit smtp-server autocannon tsx; do
    if [ -e "node_modules/$dev" ]; then echo "dev dependency $dev survived the prune" >&2; exit 1; fi
  done
}

case "$step" in
  install) install ;;
  check) check ;;
  build) build ;;
  prune) prune ;;
  all) install; check; build; prune ;;
  *) echo "usage: $0 [install|check|build|prune|all] [dir]" >&2; exit 2 ;;
esac
