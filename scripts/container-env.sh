# Podman settings of the local test path (sourced by scripts/container-*.sh and test/deploy/container.test.ts
# reads the same values). This sandbox runs a hybrid cgroup v1/v2 mount, where crun refuses to start
# ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"): runc is used instead. Root here
# lacks CAP_SYS_RESOURCE, so podman's default ulimits (nofile 1048576, nproc 4194304) fail with "setrlimit
# RLIMIT_NPROC: Operation not permitted": the container gets limits at or below the host's.
# shellcheck disable=SC2034
PODMAN_GLOBAL=(--runtime "${FOLIO_OCI_RUNTIME:-runc}")
# shellcheck disable=SC2034
PODMAN_LIMITS=(--ulimit "nofile=${FOLIO_ULIMIT_NOFILE:-16384}:${FOLIO_ULIMIT_NOFILE:-16384}" --ulimit "nproc=${FOLIO_ULIMIT_NPROC:-4096}:${FOLIO_ULIMIT_NPROC:-4096}")
