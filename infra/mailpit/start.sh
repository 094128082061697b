#!/usr/bin/env bash
# Starts Mailpit (built by build.sh) with its web inbox and its SMTP server on
# ports of 127.0.0.1 only, and waits until both answer. Prints the process id
# on stdout.
#
#   infra/mailpit/start.sh WEB_PORT SMTP_PORT [DATA_DIR]
#
# With DATA_DIR the messages are kept in DATA_DIR/mailpit.db across restarts,
# and the log goes to DATA_DIR/mailpit.log; without it Mailpit keeps them in
# a temporary database it deletes when it stops, and logs to /tmp.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
web=${1:?usage: start.sh WEB_PORT SMTP_PORT [DATA_DIR]}
smtp=${2:?usage: start.sh WEB_PORT SMTP_PORT [DATA_DIR]}
data=${3:-}

bin=$("$here/build.sh")
# No update check (no call to the internet) and no reverse DNS lookup of
# each SMTP client.
args=(--listen "127.0.0.1:$web" --smtp "127.0.0.1:$smtp" --disable-version-check --smtp-disable-rdns --quiet)
if [ -n "$data" ]; then
  mkdir -p "$data"
  args+=(--database "$data/mailpit.db")
  log="$data/mailpit.log"
else
  log="${TMPDIR:-/tmp}/mailpit-$smtp.log"
fi

# As infra/dynamodb-local/start.sh: until its pid is printed, whatever stops
# this script stops Mailpit too.
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$bin" "${args[@]}" >"$log" 2>&1 &
pid=$!

# Mailpit answers in a fraction of a second; 30 s leaves room for a busy
# machine.
deadline=$((SECONDS + 30))
until (exec 3<>"/dev/tcp/127.0.0.1/$web") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$smtp") 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "Mailpit did not start on ports $web and $smtp; see $log" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  sleep 0.1
done
echo "$pid"
trap - EXIT
