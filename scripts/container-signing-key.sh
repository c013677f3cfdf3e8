#!/usr/bin/env bash
# Makes the secrets compose.yaml reads, in deploy/secrets/ (ignored by git), unless they exist:
#   signing.p12 + signing.p12.password  a signing identity: an ECDSA P-256 root CA and a signer it issued,
#                                        exported with openssl's defaults (PBES2/AES-256, HMAC-SHA-256 MAC)
#   database_url                         postgres://folio:$POSTGRES_PASSWORD@postgres:5432/folio
#   admin_token                          the ingest's usage token
# For production use a signer issued by your own CA instead (docs/operations.md, "The signing key").
#   POSTGRES_PASSWORD=… scripts/container-signing-key.sh [dir]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-deploy/secrets}"
mkdir -p "$dir"
umask 077
if [ ! -f "$dir/signing.p12" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  subject="${FOLIO_SIGNER_SUBJECT:-/O=Folio/CN=Folio document signing}"
  openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/root.key"
  openssl req -x509 -new -key "$tmp/root.key" -sha256 -days 3650 -subj "/O=Folio/CN=Folio signing root" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$tmp/root.pem"
  openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/signer.key"
  openssl req -new -key "$tmp/signer.key" -subj "$subject" -out "$tmp/signer.csr"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n' >"$tmp/ext"
  openssl x509 -req -in "$tmp/signer.csr" -CA "$tmp/root.pem" -CAkey "$tmp/root.key" -CAcreateserial -sha256 \
    -days 1095 -extfile "$tmp/ext" -out "$tmp/signer.pem" 2>/dev/null
  openssl rand -base64 24 | tr -d '\n' >"$dir/signing.p12.password"
  openssl pkcs12 -export -inkey "$tmp/signer.key" -in "$tmp/signer.pem" -certfile "$tmp/root.pem" \
    -passout "file:$dir/signing.p12.password" -out "$dir/signing.p12"
  cp "$tmp/root.pem" "$dir/signing-root.pem"
  echo "made $dir/signing.p12 (+ .password, signing-root.pem)" >&2
fi
if [ ! -f "$dir/database_url" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the same value compose.yaml gives PostgreSQL}"
  printf 'postgres://folio:%s@postgres:5432/folio' "$POSTGRES_PASSWORD" >"$dir/database_url"
fi
[ -f "$dir/admin_token" ] || openssl rand -hex 24 | tr -d '\n' >"$dir/admin_token"
# Compose bind-mounts file secrets as they are: the image's user (uid 10001) must be able to read them.
if [ "$(id -u)" -eq 0 ]; then
  chown 10001:10001 "$dir/signing.p12" "$dir/signing.p12.password" "$dir/database_url" "$dir/admin_token"
  chmod 0400 "$dir/signing.p12" "$dir/signing.p12.password" "$dir/database_url" "$dir/admin_token"
else
  chmod 0644 "$dir/signing.p12" "$dir/signing.p12.password" "$dir/database_url" "$dir/admin_token"
  echo "note: not root, so the secrets are made world-readable for the container's uid 10001" >&2
fi
