#!/usr/bin/env bash
# The realistic workload on the n8n peer (docs/performance.md "A realistic workload side by side"):
# imports test/bench/peer/bench-auth-realistic.json into the n8n that ../shared/peers/n8n installed in
# PEER_DIR (once), starts the 20 ms target on 127.0.0.1:5699 that both sides call, and runs the peer's
# bench-n8n.sh on that webhook. Needs n8n running (PEER_DIR/start-n8n.sh).
#   PEER_DIR=... bash test/bench/peer/n8n-realistic.sh      (CONNS, REPS, DURATION as bench-n8n.sh takes them)
set -euo pipefail
DIR="${PEER_DIR:?set PEER_DIR to the folder of the n8n peer}"
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$DIR/n8n-env.sh"
if [[ ! -f "$N8N_USER_FOLDER/.realistic-done" ]]; then
  "$NODE_BIN" "$N8N_BIN" import:workflow --input="$HERE/bench-auth-realistic.json" >>"$DIR/logs/setup.log" 2>&1
  "$NODE_BIN" "$N8N_BIN" publish:workflow --id=benchAuthRealistic >>"$DIR/logs/setup.log" 2>&1
  touch "$N8N_USER_FOLDER/.realistic-done"
  echo "imported bench-auth-realistic: restart n8n (stop-n8n.sh, start-n8n.sh) so it serves the webhook" >&2
fi
# The peer's script sends the API key to the webhook named bench-auth only: the same for ours.
sed -e 's/== "bench-auth" ]]/== bench-auth* ]]/' -e 's/\$t == bench-auth ]]/$t == bench-auth* ]]/g' "$DIR/bench-n8n.sh" > "$DIR/bench-n8n-any.sh"
node -e '
  require("node:http").createServer((q, s) => { q.resume(); q.on("end", () => setTimeout(() => s.writeHead(200, {"content-type": "application/json"}).end("{\"ok\":true}"), 20)); })
    .listen(Number(process.env.BENCH_TARGET_PORT ?? 5699), "127.0.0.1");
' & TARGET=$!
trap 'kill $TARGET 2>/dev/null || true' EXIT
LABEL="${LABEL:-realistic}" TARGETS=bench-auth-realistic bash "$DIR/bench-n8n-any.sh"
