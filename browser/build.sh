#!/usr/bin/env bash
# Rebuilds the browser page's assets into crates/http/assets/browser/ (committed; `cargo build`
# needs no Node). Needs Node.js 20+ and npm; installs exactly what package-lock.json pins.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npx vite build
# The bundle is also embedded gzip-compressed (-n: no name or time stamp, so rebuilds are byte-identical).
gzip -9 -n -k -f ../crates/http/assets/browser/assets/app.js
ls -l ../crates/http/assets/browser ../crates/http/assets/browser/assets
