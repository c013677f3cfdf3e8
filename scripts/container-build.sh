#!/usr/bin/env bash
# LOCAL TEST PATH: builds the Dockerfile with podman on a machine that reaches Debian's mirror and the npm
# registry but no image registry and not nodejs.org (the development box). Users with Docker simply run
# `docker build -t folio .`; none of what follows is needed there.
#
#   scripts/container-build.sh            → image folio:local
#
# 1. Base image: `debootstrap --variant=minbase bookworm` into $FOLIO_CTR_DIR/rootfs, imported as
#    localhost/folio-base:bookworm (made once; FOLIO_REBUILD_BASE=1 remakes it). The host's extra CA
#    certificates (/usr/local/share/ca-certificates, e.g. a TLS-intercepting egress proxy) are added to it and
#    NODE_EXTRA_CA_CERTS points at them, so apt and npm inside the build trust what the host trusts.
# 2. Build context: the committed tree (`git archive HEAD`) plus the working tree's Dockerfile, .dockerignore
#    and deploy/ (so other people's uncommitted work never enters the image), and this host's Node
#    (/usr/bin/node, /usr/include/node, npm) as deploy/local-node/ for NODE_DIST=context.
# 3. `podman build --format docker --build-arg BASE_IMAGE=localhost/folio-base:bookworm --build-arg NODE_DIST=context`
#    (docker format: OCI image configs have no HEALTHCHECK, podman would drop it).
#
# Podman flags this sandbox needs (see docs/operations.md, "Building the image without a registry"): runc
# instead of crun (crun refuses the hybrid cgroup v1/v2 mount: "cgroups in hybrid mode not supported"), and
# ulimits at or below the host's (no CAP_SYS_RESOURCE: podman's defaults fail with "setrlimit RLIMIT_NPROC:
# Operation not permitted"). scripts/container-env.sh holds them.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=container-env.sh
source scripts/container-env.sh
export BUILDAH_RUNTIME="${FOLIO_OCI_RUNTIME:-runc}" # buildah RUN steps use it (crun fails here, see above)

ctr_dir="${FOLIO_CTR_DIR:-/tmp/folio-ctr}"
base="${FOLIO_BASE_IMAGE:-localhost/folio-base:bookworm}"
tag="${FOLIO_IMAGE:-folio:local}"
mkdir -p "$ctr_dir"
started=$SECONDS
phase() { echo "container-build: [$((SECONDS - started)) s] $*" >&2; }

# What a fresh Debian 12 machine lacks. Debian's podman depends on "crun | runc" and apt picks crun, which cannot
# run containers on a hybrid cgroup mount (see above): runc is named. netavark (podman's bridge network, used by
# the build's RUN steps and by `-p` in the test) needs iptables, which podman only suggests.
missing=()
for cmd in podman "${FOLIO_OCI_RUNTIME:-runc}" debootstrap iptables git node npm; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "container-build: missing ${missing[*]}: apt-get install -y podman runc debootstrap iptables (docs/operations.md, \"Building the image without a registry\")" >&2
  exit 1
fi
# Room: the build needs about 2.5 GB in podman's storage (the image, its stages as build cache, the base) and
# about 1.5 GB in its temporary directory while committing layers. Both default to the root filesystem
# (/var/lib/containers/storage, /var/tmp); move them with graphroot in /etc/containers/storage.conf and TMPDIR.
for dir in "$(podman info -f '{{.Store.GraphRoot}}')" "${TMPDIR:-/var/tmp}" "$ctr_dir"; do
  mkdir -p "$dir"
  free_kb="$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')"
  if [ "$free_kb" -lt $((5 * 1024 * 1024)) ]; then
    echo "container-build: only $((free_kb / 1024)) MB free at $dir, 5 GB wanted: set graphroot in /etc/containers/storage.conf, TMPDIR or FOLIO_CTR_DIR to a disk with room" >&2
    exit 1
  fi
done

if [ "${FOLIO_REBUILD_BASE:-0}" = 1 ] || ! podman image exists "$base"; then
  phase "debootstrap bookworm into $ctr_dir/rootfs"
  rm -rf "$ctr_dir/rootfs"
  debootstrap --variant=minbase bookworm "$ctr_dir/rootfs" http://deb.debian.org/debian >"$ctr_dir/debootstrap.log" 2>&1 ||
    { tail -20 "$ctr_dir/debootstrap.log" >&2; exit 1; }
  cat >"$ctr_dir/rootfs/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  changes=()
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$ctr_dir/rootfs/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$ctr_dir/rootfs/usr/local/share/ca-certificates/"
    cat /usr/local/share/ca-certificates/*.crt >"$ctr_dir/rootfs/etc/local-build-ca.pem"
    changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/local-build-ca.pem')
  fi
  rm -rf "$ctr_dir/rootfs/var/cache/apt/archives/"*.deb "$ctr_dir/rootfs/var/lib/apt/lists/"*
  tar -C "$ctr_dir/rootfs" -c . | podman import "${changes[@]}" - "$base" >/dev/null
  phase "base image $base imported"
fi

ctx="$(mktemp -d "$ctr_dir/context.XXXXXX")"
trap 'rm -rf "$ctx"' EXIT
git archive --format=tar HEAD | tar -x -C "$ctx"
cp Dockerfile .dockerignore "$ctx/"
rm -rf "$ctx/deploy" && cp -r deploy "$ctx/deploy"
node_tree="$ctx/deploy/local-node"
mkdir -p "$node_tree/bin" "$node_tree/include" "$node_tree/lib/node_modules"
cp "$(readlink -f "$(command -v node)")" "$node_tree/bin/node"
cp -r /usr/include/node "$node_tree/include/node"
cp -r "$(npm root -g)/npm" "$node_tree/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$node_tree/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$node_tree/bin/npx"

previous="$(podman image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)"
phase "building $tag (Node $(node --version) from this host, base $base)"
podman "${PODMAN_GLOBAL[@]}" build "${PODMAN_LIMITS[@]}" --format docker \
  --build-arg BASE_IMAGE="$base" --build-arg NODE_DIST=context \
  -t "$tag" -f "$ctx/Dockerfile" "$ctx"
podman image ls "$tag"
# The image the tag named before is untagged now: removed (its build stages stay as cache; `podman image
# prune -f` frees them too).
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect -f '{{.Id}}' "$tag")" ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi
phase "done"
