# syntax=docker/dockerfile:1
#
# Folio: the API and the telemetry ingest in one image.
#
#   docker build -t folio .
#   docker run --rm -p 8080:8080 folio            # API (default command: api)
#   docker run --rm -p 8081:8081 folio ingest     # telemetry ingest
#
# Build arguments (the defaults are what a user with Docker and a registry builds):
#   BASE_IMAGE   Debian bookworm base of every stage                  (default debian:bookworm-slim)
#   NODE_VERSION Node.js LTS from nodejs.org's official tarball (default 24.21.0, the Node 24 LTS line)
#   NODE_DIST    where Node comes from: "official" (the tarball above, checked against SHASUMS256.txt) or
#                "context": LOCAL TEST PATH ONLY, a Node tree (bin/node, bin/npm, include/node,
#                lib/node_modules/npm) copied into deploy/local-node/ of the build context by
#                scripts/container-build.sh on a machine that cannot reach nodejs.org or an image registry.
#
# Stages: node-* (Node.js alone) → build (npm ci, tsc, client bundle) → deps (npm ci --omit=dev, native
# modules compiled) → runtime (LibreOffice writer, fonts, poppler, qpdf, Node, the build output, non-root).

ARG BASE_IMAGE=debian:bookworm-slim
ARG NODE_DIST=official

# ---- Node.js from the official tarball ---------------------------------------------------------------
FROM ${BASE_IMAGE} AS node-official
ARG NODE_VERSION=24.21.0
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates curl xz-utils; \
    arch="$(dpkg --print-architecture)"; \
    case "$arch" in amd64) narch=x64 ;; arm64) narch=arm64 ;; *) echo "unsupported architecture $arch" >&2; exit 1 ;; esac; \
    cd /tmp; \
    curl -fsSLO "https://nodejs.org/dist/v${NODE_VERSION}/node-v${NODE_VERSION}-linux-${narch}.tar.xz"; \
    curl -fsSLO "https://nodejs.org/dist/v${NODE_VERSION}/SHASUMS256.txt"; \
    grep " node-v${NODE_VERSION}-linux-${narch}.tar.xz\$" SHASUMS256.txt | sha256sum -c -; \
    mkdir -p /opt/node; \
    tar -xJf "node-v${NODE_VERSION}-linux-${narch}.tar.xz" -C /opt/node --strip-components=1 --no-same-owner; \
    rm -rf /tmp/* /opt/node/share/doc /opt/node/CHANGELOG.md; \
    /opt/node/bin/node --version

# ---- Node.js from the build context (local test path, see NODE_DIST) ------------------------------------
FROM ${BASE_IMAGE} AS node-context
COPY deploy/local-node/ /opt/node/
RUN /opt/node/bin/node --version

FROM node-${NODE_DIST} AS node

# ---- build: npm ci (with dev dependencies), TypeScript, the client bundle ------------------------------
FROM ${BASE_IMAGE} AS toolchain
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates python3 make g++; \
    rm -rf /var/lib/apt/lists/*
COPY --from=node /opt/node/ /usr/local/
# Native modules (better-sqlite3) compile against the headers of the Node in /usr/local, never downloaded.
ENV npm_config_nodedir=/usr/local npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /app

FROM toolchain AS build
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
RUN npm ci
COPY tsconfig.json ./
COPY src/ src/
COPY packages/client/ packages/client/
# The client first: the server's CLI imports @folio/client, whose types are the client build's dist/types.
RUN node packages/client/build.mjs && npx tsc -p tsconfig.json

# ---- deps: production node_modules only ----------------------------------------------------------------
FROM toolchain AS deps
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
# The native SQLite and PKCS#11 addons must exist (npm 11.19 runs unapproved install scripts with a notice only; a
# later default that skips them would leave them out): open an in-memory database, load the PKCS#11 binding.
RUN npm ci --omit=dev && npm cache clean --force \
    && node -e "new (require('better-sqlite3'))(':memory:').close()" \
    && node -e "new (require('pkcs11js').PKCS11)()"

# ---- fonts: the metric-compatible substitutes of Office fonts (fonts/README.md), as scripts/setup.sh builds them --
FROM ${BASE_IMAGE} AS fonts
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends python3-fonttools \
      fonts-liberation2 fonts-crosextra-caladea fonts-dejavu fonts-lato; \
    rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY scripts/fonts/ scripts/fonts/
COPY fonts/faces.json fonts/
COPY fonts/metrics/ fonts/metrics/
RUN python3 scripts/fonts/build.py --out /app/fonts/build

# ---- runtime -------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime
# The Debian packages scripts/setup.sh installs for running (not its test tools), plus tini as PID 1: it
# forwards SIGTERM to Node and reaps whatever LibreOffice leaves orphaned.
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
      libreoffice-writer-nogui fonts-liberation2 fonts-crosextra-carlito fonts-crosextra-caladea fonts-dejavu \
      fonts-lato hyphen-en-us hyphen-en-gb \
      poppler-utils qpdf ca-certificates tini; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    groupadd --system --gid 10001 folio; \
    useradd --system --uid 10001 --gid folio --home-dir /home/folio --create-home --shell /usr/sbin/nologin folio; \
    mkdir -p /var/lib/folio; \
    chown folio:folio /var/lib/folio
COPY --from=node /opt/node/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps /app/node_modules/ node_modules/
COPY --from=build /app/package.json ./
COPY --from=build /app/dist/ dist/
COPY --from=build /app/packages/client/package.json packages/client/
COPY --from=build /app/packages/client/dist/ packages/client/dist/
# Found by src/office/fonts.ts (fonts/build of the installation) and linked into every LibreOffice profile.
COPY --from=fonts /app/fonts/build/ fonts/build/
COPY deploy/entrypoint.sh deploy/healthcheck.mjs deploy/
# Listen on every interface inside the container; state (SQLite, outbox, a generated signing key) in a
# volume when no PostgreSQL is configured. LibreOffice's per-worker directories go to /dev/shm. Two glibc
# malloc arenas and a fixed 128 KiB mmap threshold: a burst's memory goes back (docs/operations.md, "Memory
# after a burst"); read by the C library at start, so they must be in the environment, not Folio's configuration.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    HOST=0.0.0.0 \
    PORT=8080 \
    INGEST_PORT=8081 \
    DATA_DIR=/var/lib/folio \
    HOME=/home/folio
VOLUME ["/var/lib/folio"]
USER folio:folio
EXPOSE 8080 8081
STOPSIGNAL SIGTERM
# /v1/health must answer 200; a LibreOffice worker starts in a few seconds, hence the start period.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--", "/app/deploy/entrypoint.sh"]
CMD ["api"]
