# Podman settings of the local test path (sourced by scripts/container-*.sh; test/deploy/container.test.ts
# sources it too, `bash -c 'source scripts/container-env.sh; …'`, so there is one place for them). This sandbox runs a hybrid cgroup v1/v2 mount, where crun refuses to start
# ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"): runc is used instead. Root here
# lacks CAP_SYS_RESOURCE, so podman's default ulimits (nofile 1048576, nproc 4194304) fail with "setrlimit
# RLIMIT_NPROC: Operation not permitted": the container gets limits at or below the host's.
# shellcheck disable=SC2034
PODMAN_GLOBAL=(--runtime "${FOLIO_OCI_RUNTIME:-runc}")
# 16384 open files and 4096 processes, or the host's hard limit where it is lower (a container cannot get more
# without CAP_SYS_RESOURCE). FOLIO_ULIMIT_NOFILE / FOLIO_ULIMIT_NPROC override.
_folio_cap() { local h; h="$(ulimit -H "$1")"; if [ "$h" = unlimited ] || [ "$h" -gt "$2" ]; then echo "$2"; else echo "$h"; fi; }
_folio_nofile="${FOLIO_ULIMIT_NOFILE:-$(_folio_cap -n 16384)}"
_folio_nproc="${FOLIO_ULIMIT_NPROC:-$(_folio_cap -u 4096)}"
# shellcheck disable=SC2034
PODMAN_LIMITS=(--ulimit "nofile=$_folio_nofile:$_folio_nofile" --ulimit "nproc=$_folio_nproc:$_folio_nproc")
unset -f _folio_cap
unset _folio_nofile _folio_nproc
