#!/usr/bin/env bash
# LOCAL TEST PATH: the figures of the built image (folio:local), printed for bench/README.md ("Container image"):
# its size, the time from `podman run` to /v1/health 200 healthy and to the image's HEALTHCHECK passing, the
# memory of the container idle and after conversions (PSS and RSS of its processes from the host's /proc, split
# into the API process and the LibreOffice worker, and the cgroup's usage, which includes page cache), and `podman stop`.
# The container runs as test/deploy/container.test.ts runs it: --cpus 1 (one LibreOffice worker, one engine
# thread), --memory 3g, --read-only, the flags of scripts/container-env.sh.
#
#   scripts/container-measure.sh          (FOLIO_IMAGE=… for another tag; ROUNDS=… docx→pdf rounds, default 5)
#
# Needs podman, curl and jq on the host, and the corpus at /work/shared/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=container-env.sh
source scripts/container-env.sh
image="${FOLIO_IMAGE:-folio:local}"
rounds="${ROUNDS:-5}"
docx=/work/shared/corpus/docx/docx4j--sample-docx.docx
podman image exists "$image" || { echo "no image $image: build it with scripts/container-build.sh" >&2; exit 1; }

name="folio-measure-$$"
tmp="$(mktemp -d)"
trap 'podman "${PODMAN_GLOBAL[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data" && chown 10001:10001 "$tmp/data"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
ms() { date +%s%3N; }

# The container's processes by their host pids (its cgroup): the API's main process (main thread + engine
# threads), the LibreOffice worker (a Node process running dist/src/office/worker.js with LibreOfficeKit loaded
# in it) and the rest (tini). Each with its RSS and its PSS (shared pages split between the processes that map
# them, so the PSS figures add up; the RSS ones count the shared Node binary and libraries once per process).
memory() {
  local pid cg procs p rss pss cmd usage
  local -A r=([api]=0 [office]=0 [other]=0) s=([api]=0 [office]=0 [other]=0)
  pid="$(podman "${PODMAN_GLOBAL[@]}" inspect -f '{{.State.Pid}}' "$name")"
  cg="$(awk -F: '$2 == "memory" { print $3 }' "/proc/$pid/cgroup")"
  procs="/sys/fs/cgroup/memory$cg/cgroup.procs"
  [ -r "$procs" ] || procs="/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")/cgroup.procs"
  while read -r p; do
    rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)"
    pss="$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)"
    cmd="$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
    case "$cmd" in *office/worker.js*) k=office ;; *dist/src/main.js*) k=api ;; *) k=other ;; esac
    r[$k]=$((r[$k] + ${rss:-0})) && s[$k]=$((s[$k] + ${pss:-0}))
  done <"$procs"
  usage="$(podman "${PODMAN_GLOBAL[@]}" stats --no-stream --format '{{.MemUsage}}' "$name" | cut -d/ -f1 | xargs)"
  printf '%-24s PSS total %3d MB (API %3d MB, LibreOffice worker %3d MB, tini %d MB); RSS API %3d MB, worker %3d MB; cgroup usage %s\n' \
    "$1" $(((s[api] + s[office] + s[other]) / 1024)) $((s[api] / 1024)) $((s[office] / 1024)) $((s[other] / 1024)) \
    $((r[api] / 1024)) $((r[office] / 1024)) "$usage"
}

echo "image $image: $(podman image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }'), id $(podman image inspect -f '{{.Id}}' "$image" | cut -c1-12), created $(podman image inspect -f '{{.Created}}' "$image" | cut -d. -f1)"
echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

t0="$(ms)"
podman "${PODMAN_GLOBAL[@]}" run -d --name "$name" "${PODMAN_LIMITS[@]}" --cpus 1 --memory 3g --read-only \
  --tmpfs /tmp:rw,mode=1777 --mount type=tmpfs,destination=/home/folio,chown=true --shm-size 512m \
  -p "127.0.0.1:$port:8080" -v "$tmp/data:/var/lib/folio" -e LOG_LEVEL=warn "$image" api >/dev/null
t_started="$(ms)"
until [ "$(curl -s -m 3 "$url/v1/health" | jq -r .status 2>/dev/null)" = healthy ]; do
  [ "$(podman "${PODMAN_GLOBAL[@]}" inspect -f '{{.State.Running}}' "$name")" = true ] ||
    { podman "${PODMAN_GLOBAL[@]}" logs --tail 30 "$name" >&2; exit 1; }
  [ $(($(ms) - t0)) -lt 240000 ] || { echo "not healthy within 240 s" >&2; exit 1; }
  sleep 0.2
done
t_healthy="$(ms)"
until podman "${PODMAN_GLOBAL[@]}" healthcheck run "$name" >/dev/null 2>&1; do sleep 0.2; done
t_check="$(ms)"
echo "podman run returned after $((t_started - t0)) ms; /v1/health healthy after $((t_healthy - t0)) ms; HEALTHCHECK passed after $((t_check - t0)) ms"

sleep 10
memory "idle (healthy + 10 s)"

# An API key through the outbox (register → the code in the .eml → verify).
email="measure-$$@example.com"
curl -sf "$url/v1/auth/register?email=$email" >/dev/null
code=""
for _ in $(seq 1 50); do
  code="$(cat "$tmp/data/outbox/"* 2>/dev/null | sed -e ':a' -e '/=$/{N;s/=\n//;ba' -e '}' | grep -o 'verification code is [0-9]\{6\}' | tail -1 | grep -o '[0-9]\{6\}' || true)"
  [ -n "$code" ] && break
  sleep 0.2
done
key="$(curl -sf "$url/v1/auth/verify?email=$email&code=$code" | jq -r .apiKey)"

t1="$(ms)"
curl -sf -o "$tmp/first.pdf" -H "authorization: Bearer $key" -F "file=@$docx" "$url/v1/convert?from=docx&to=pdf"
t2="$(ms)"
for _ in $(seq 2 "$rounds"); do
  curl -sf -o "$tmp/out.pdf" -H "authorization: Bearer $key" -F "file=@$docx" "$url/v1/convert?from=docx&to=pdf"
done
t3="$(ms)"
echo "docx→pdf $(basename "$docx") ($(($(stat -c %s "$docx") / 1024)) KB): first $((t2 - t1)) ms, then $(((t3 - t2) / (rounds > 1 ? rounds - 1 : 1))) ms each (mean of $((rounds - 1)), wall clock)"
memory "after $rounds docx→pdf"
printf '# Folio\n\n%s\n' "$(for i in $(seq 1 200); do printf -- '- item %d with **bold** text\n' "$i"; done)" >"$tmp/list.md"
for _ in $(seq 1 20); do
  curl -sf -o /dev/null -H "authorization: Bearer $key" -F "file=@$tmp/list.md" "$url/v1/convert?from=md&to=docx"
done
memory "after + 20 md→docx"

t4="$(ms)"
podman "${PODMAN_GLOBAL[@]}" stop -t 30 "$name" >/dev/null
echo "podman stop (idle): $(($(ms) - t4)) ms, exit code $(podman "${PODMAN_GLOBAL[@]}" inspect -f '{{.State.ExitCode}}' "$name")"
