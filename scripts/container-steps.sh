#!/usr/bin/env bash
# The Dockerfile's steps on this host, in a clean directory (no container engine needed): the build stage
# (`npm ci`, `npm run build`), the run stage (`npm ci --omit=dev` and the built dist/), then the server
# started as the image starts it, with plain `node`, once per Node binary given (default: `node`):
#
#   scripts/container-steps.sh [/path/to/node …]
#
# Each start is checked: /ready, the first API key read from the file production writes it to, a REST
# write and a GraphQL read, then SIGTERM and exit code 0. The sources are the committed tree (git HEAD).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=("$@")
[ ${#nodes[@]} -gt 0 ] || nodes=(node)
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== build stage"
mkdir -p "$work/src" "$work/build" "$work/run"
git -C "$root" archive HEAD | tar -x -C "$work/src"
(cd "$work/src" && cp -r package.json package-lock.json prisma.config.ts prisma tsconfig.json tsconfig.build.json src "$work/build/")
(cd "$work/build" && npm ci --no-audit --no-fund --loglevel=error && npm run -s build)

echo "== run stage"
(cd "$work/src" && cp -r package.json package-lock.json prisma.config.ts prisma "$work/run/")
(cd "$work/run" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
cp -r "$work/build/dist" "$work/run/dist"
if [ -e "$work/run/node_modules/vitest" ] || [ -e "$work/run/node_modules/eslint" ]; then
  echo "FAILED: development dependencies in the run stage" >&2
  exit 1
fi

for node in "${nodes[@]}"; do
  echo "== start with $("$node" --version) ($node)"
  data="$work/data-$RANDOM"
  port=$("$node" -e 's=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
  (cd "$work/run" && NODE_ENV=production HOST=127.0.0.1 PORT=$port DATA_DIR=$data REQUIRE_HTTPS=false \
    exec "$node" --import ./dist/observability/preload.js dist/main.js) >"$work/server.log" 2>&1 &
  pid=$!
  base="http://127.0.0.1:$port"
  for _ in $(seq 1 120); do
    curl -sf "$base/ready" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log"; echo "FAILED: the server exited" >&2; exit 1; }
    sleep 0.5
  done
  curl -sf "$base/ready" >/dev/null || { cat "$work/server.log"; echo "FAILED: not ready" >&2; exit 1; }
  key=$(tr -d '[:space:]' <"$data/first-api-key")
  lead=$(curl -sf -X POST "$base/backend/leads" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    -d '{"name":"Ana","phone":"+5531988887777"}')
  echo "$lead" | grep -q '"success":true' || { echo "FAILED: POST /backend/leads: $lead" >&2; exit 1; }
  read=$(curl -sf "$base/graphql" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    -d '{"query":"{ leads { data { name phone } } }"}')
  [ "$read" = '{"data":{"leads":{"data":[{"name":"Ana","phone":"+5531988887777"}]}}}' ] ||
    { echo "FAILED: GraphQL leads: $read" >&2; exit 1; }
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  pid=
  [ "$status" -eq 0 ] || { cat "$work/server.log"; echo "FAILED: exit code $status after SIGTERM" >&2; exit 1; }
  echo "ok: ready, a lead written over REST and read over GraphQL, exit 0 after SIGTERM"
done
