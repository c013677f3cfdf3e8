#!/usr/bin/env bash
# `npm run lint:check` (a step of `npm test`): ESLint and Prettier's check side by side. Each keeps one core busy,
# and ESLint's type-aware pass (the TypeScript program of tsconfig.check.json, then the rules) is the long one, so
# on two cores the step takes about ESLint's time instead of the sum. No `--cache`: ESLint keys a cached result on
# the file's own content, so a type changed elsewhere (a function turned async) would leave its callers' floating
# promises unreported.
set -u
cd "$(dirname "$0")/../.."
bin=tools/lint/node_modules/.bin
"$bin/eslint" . &
eslint=$!
"$bin/prettier" --check --log-level warn .
prettier_status=$?
wait "$eslint"
eslint_status=$?
[ "$eslint_status" -eq 0 ] && [ "$prettier_status" -eq 0 ]
