#!/usr/bin/env bash
# LOCAL TEST PATH: builds folio:local when it is missing (scripts/container-build.sh; FOLIO_REBUILD=1 always
# rebuilds), then runs test/deploy/container.test.ts against it: non-root, read-only root, CPU quota 1 → one
# LibreOffice worker and one engine thread, /v1/health 200, the image's HEALTHCHECK, md→docx and docx→pdf,
# the mounted signing key, the ingest mode, and SIGTERM → exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=container-env.sh
source scripts/container-env.sh
export BUILDAH_RUNTIME="${FOLIO_OCI_RUNTIME:-runc}"
image="${FOLIO_IMAGE:-folio:local}"
if [ "${FOLIO_REBUILD:-0}" = 1 ] || ! podman image exists "$image"; then
  scripts/container-build.sh
fi
exec npx vitest run test/deploy/container.test.ts
