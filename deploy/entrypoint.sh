#!/bin/sh
# Container entry point: `entrypoint.sh [api|ingest|all] [args…]` (default api). Node is exec'd, so it is the
# process tini (PID 1) forwards SIGTERM to; main.js drains in-flight requests and exits 0.
# Any other first argument is run as a command (e.g. `docker run … folio node -e '…'`).
#
# Secrets as files (Docker/Compose secrets, Kubernetes Secret volumes): for each variable below, when
# VAR_FILE names a readable file and VAR itself is unset, VAR is set to the file's content (trailing
# newlines removed). Setting both is refused, naming the variable.
set -eu
cd "$(dirname "$0")/.."

for var in DATABASE_URL TELEMETRY_DATABASE_URL REDIS_URL SMTP_URL SIGNING_P12_PASSWORD ADMIN_TOKEN CODE_HASH_SECRET; do
  file_var="${var}_FILE"
  eval "file=\${$file_var:-}"
  [ -n "$file" ] || continue
  eval "set_already=\${$var+x}"
  if [ -n "$set_already" ]; then
    echo "Invalid configuration: $var and $file_var are both set" >&2
    exit 1
  fi
  if [ ! -r "$file" ]; then
    echo "Invalid configuration: $file_var ($file) is not a readable file" >&2
    exit 1
  fi
  value="$(cat "$file")"
  export "$var=$value"
  unset "$file_var"
done

case "${1:-api}" in
  api | ingest | all)
    mode="${1:-api}"
    [ "$#" -gt 0 ] && shift
    exec node dist/src/main.js "$mode" "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
