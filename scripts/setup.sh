#!/usr/bin/env bash
# Installs what is missing on a fresh Debian machine, and returns fast when everything is present.
# Called by `npm start`, `npm test` and `npm run bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

# Fonts and hyphenation patterns serve Word parity of DOCX→PDF (src/office/fonts.ts): the font packages are also
# what scripts/fonts/build.py (python3-fonttools) makes the metric-compatible Office substitutes from (below);
# hyphen-* let LibreOffice hyphenate documents that ask for automatic hyphenation, as Word does.
apt_packages=(libreoffice-writer-nogui fonts-liberation2 fonts-crosextra-carlito fonts-crosextra-caladea
  fonts-dejavu fonts-lato python3-fonttools hyphen-en-us hyphen-en-gb poppler-utils qpdf)
# Tools only the tests and benchmarks need (reference implementations, the browser, NSS tools for pdfsig, and a
# software HSM with pkcs11-tool for the PKCS#11 signing tests).
if [ "${FOLIO_SETUP_DEV:-1}" = "1" ]; then
  apt_packages+=(pandoc chromium libnss3-tools openssl softhsm2 opensc)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The metric-compatible substitutes of Office fonts (fonts/README.md) into fonts/build, which every LibreOffice
# worker profile links: rebuilt only when an input changed (the script compares a hash of its inputs).
/usr/bin/python3 scripts/fonts/build.py >&2

# npm packages: `npm ci` when node_modules is absent or older than the lock file.
# The lock is complete for every platform: package.json's `overrides` pins rollup (pulled in by vitest → vite)
# to 4.62.3. Later releases either miss some of their optional platform binaries (@rollup/rollup-<os>-<cpu>) on
# this machine's registry, so npm leaves them out of the lock and `npm ci` refuses it as out of sync, or (4.62.4 to
# 4.67.4) also list @napi-rs/lzma-linux-x64-gnu, a build-tool binary that wants Node >= 22. Lift the pin once a
# rollup release has every binary here: `npm ci` on a fresh clone must then still pass.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
fi

# Lint and format tools (`npm run lint`): their own lock in tools/lint, since typescript-eslint needs TypeScript's
# JavaScript API, which the root's TypeScript 7 (native) no longer ships; tools/lint carries TypeScript 5.9 for it.
if [ "${FOLIO_SETUP_DEV:-1}" = "1" ]; then
  if [ ! -d tools/lint/node_modules ] || [ tools/lint/package-lock.json -nt tools/lint/node_modules/.package-lock.json ]; then
    echo "setup: installing lint tools (npm ci in tools/lint)" >&2
    npm ci --prefix tools/lint --no-audit --no-fund >&2
  fi
fi
