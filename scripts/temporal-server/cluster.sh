#!/usr/bin/env bash
# A full Temporal server (frontend, history, matching and worker services in one process) on a private
# PostgreSQL cluster, with mutual TLS required on the frontend, everything on 127.0.0.1 and inside one
# directory. Used by the test:scale suites (test/scale/temporal-server.ts) and bench:scale; usable by
# hand. Binaries: scripts/temporal-server/build.sh (npm run temporal-server:install).
#
#   cluster.sh up <dir> <ports>   ports: 10 free ports below 32768 (Temporal keeps membership ports in a
#                                 PostgreSQL smallint column), comma-separated: postgres, frontend gRPC,
#                                 frontend HTTP, then gRPC and membership of frontend (membership),
#                                 history, matching and worker: pg,fe,http,fe-m,hi,hi-m,ma,ma-m,wo,wo-m
#   cluster.sh down <dir>         stops the server and PostgreSQL by their PIDs
#
# Authorization (opt-in, docs/authorization.md): with TANDEM_TS_JWKS_URL set (an http(s) URL of a JWKS on
# loopback), the frontend runs Temporal's default JWT claim mapper and authorizer (the `permissions`
# claim: "<namespace>:read|write|admin", "temporal-system:admin" for operators), so the client certificate
# alone no longer authorizes anything. The server's own worker service then reaches the cluster through
# an internal-frontend (no claim mapper: Temporal's design), which only accepts internode mTLS; `up` then
# takes 13 ports: the 10 above, then internal-frontend gRPC, membership and HTTP.
#
# `up` prints KEY=value lines: ADDRESS, CA, CLIENT_CERT, CLIENT_KEY, SERVER_NAME, PID, PG_PID, LOG (and with
# authorization INTERNAL_FRONTEND, INTERNODE_CA, INTERNODE_CERT, INTERNODE_KEY).
# Nothing listens beyond loopback; PostgreSQL takes a password (scram-sha-256) on TCP and its unix
# socket lives in <dir>. PostgreSQL refuses to run as root, so as root it runs as the postgres user.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tools="${TANDEM_TEMPORAL_SERVER_TOOLS:-$root/.tools/temporal-server}"
cmd="${1:?usage: cluster.sh up|down <dir> [ports]}"
dir="${2:?usage: cluster.sh up|down <dir> [ports]}"

pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

stop_pid() { # <pid file> <signal>: signal the process, wait up to 20 s, then SIGKILL
  local f="$1" sig="$2" pid
  [ -f "$f" ] || return 0
  pid="$(head -1 "$f")"
  [ -n "$pid" ] || return 0
  kill "-$sig" "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

if [ "$cmd" = down ]; then
  stop_pid "$dir/temporal.pid" TERM
  # SIGINT is PostgreSQL's "fast" shutdown: sessions are ended, the cluster stops cleanly.
  stop_pid "$dir/pg/postmaster.pid" INT
  exit 0
fi
[ "$cmd" = up ] || { echo "unknown command $cmd (up|down)" >&2; exit 2; }
ports="${3:?usage: cluster.sh up <dir> <10 comma-separated ports>}"
IFS=, read -r P_PG P_FE P_HTTP P_FE_M P_HI P_HI_M P_MA P_MA_M P_WO P_WO_M P_IF P_IF_M P_IF_HTTP <<<"$ports"
jwks="${TANDEM_TS_JWKS_URL:-}"
if [ -n "$jwks" ]; then
  [[ "$jwks" =~ ^https?://(127\.0\.0\.1|localhost)(:[0-9]+)?/ ]] || { echo "TANDEM_TS_JWKS_URL=$jwks: must be an http(s) URL on 127.0.0.1 or localhost" >&2; exit 2; }
  [ -n "${P_IF_HTTP:-}" ] || { echo "with TANDEM_TS_JWKS_URL, need 13 ports (the internal-frontend's gRPC, membership and HTTP last), got: $ports" >&2; exit 2; }
fi
[ -n "${P_WO_M:-}" ] || { echo "need 10 ports, got: $ports" >&2; exit 2; }
for p in ${ports//,/ }; do [ "$p" -lt 32768 ] || { echo "port $p: Temporal stores membership ports as smallint; use ports below 32768" >&2; exit 2; }; done
for b in temporal-server temporal-sql-tool; do
  [ -x "$tools/$b" ] || { echo "$tools/$b is missing: run npm run temporal-server:install" >&2; exit 1; }
done
[ -n "$pgbin" ] || { echo "PostgreSQL is not installed: run npm run temporal-server:install" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is not installed" >&2; exit 1; }

mkdir -p "$dir"
chmod 755 "$dir"
pw="$(openssl rand -hex 16)"

# ---- certificates: a CA, the server's (SAN 127.0.0.1 and localhost) and one client's --------------
tls="$dir/tls"
mkdir -p "$tls"
(
  cd "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=tandem-test-ca" -keyout ca.key -out ca.pem 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' > client.ext
  openssl req -newkey rsa:2048 -nodes -subj "/CN=tandem-worker" -keyout client.key -out client.csr 2>/dev/null
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.pem 2>/dev/null
  if [ -n "$jwks" ]; then
    # Internode: history, matching and the internal-frontend serve with it and their clients present it.
    # A CA of its own: a client certificate of the frontend's CA (every tenant holds one) must not
    # open the internal-frontend, which grants system rights.
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=tandem-internode-ca" -keyout internode-ca.key -out internode-ca.pem 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' > internode.ext
    openssl req -newkey rsa:2048 -nodes -subj "/CN=tandem-internode" -keyout internode.key -out internode.csr 2>/dev/null
    openssl x509 -req -in internode.csr -CA internode-ca.pem -CAkey internode-ca.key -CAcreateserial -days 2 -extfile internode.ext -out internode.pem 2>/dev/null
    rm -f internode-ca.srl
  fi
  rm -f ./*.csr ./*.ext ca.srl
  chmod 600 ./*.key
)

# ---- PostgreSQL: a private cluster, its socket in <dir>, TCP on 127.0.0.1 only ------------------------
pg="$dir/pg"
mkdir -p "$pg" "$dir/pgsock" "$dir/pglog"
printf '%s\n' "$pw" > "$dir/pgpass"
chmod 600 "$dir/pgpass"
if [ "$(id -u)" = 0 ]; then chown postgres "$pg" "$dir/pgsock" "$dir/pglog" "$dir/pgpass"; fi
chmod 700 "$pg"
as_pg "$pgbin/initdb" -D "$pg" -U temporal --pwfile="$dir/pgpass" --auth=scram-sha-256 -E UTF8 >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
as_pg "$pgbin/pg_ctl" -D "$pg" -l "$dir/pglog/postgres.log" -w -t 60 \
  -o "-p $P_PG -k $dir/pgsock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c synchronous_commit=off" start >/dev/null \
  || { cat "$dir/pglog/postgres.log" >&2; exit 1; }

# ---- schemas, with the schema tool and the schemas embedded in it ------------------------------------
sqltool() { "$tools/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p "$P_PG" -u temporal --pw "$pw" "$@"; }
{
  sqltool --db temporal create-database
  sqltool --db temporal setup-schema -v 0.0
  sqltool --db temporal update-schema --schema-name postgresql/v12/temporal
  sqltool --db temporal_visibility create-database
  sqltool --db temporal_visibility setup-schema -v 0.0
  sqltool --db temporal_visibility update-schema --schema-name postgresql/v12/visibility
} >"$dir/schema.log" 2>&1 || { cat "$dir/schema.log" >&2; exit 1; }

# ---- server configuration (config/development-postgres12.yaml of v1.29, TLS added, ports private) ------
mkdir -p "$dir/config/dynamicconfig"
cat > "$dir/config/dynamicconfig/tandem.yaml" <<YAML
# Search attributes registered by \`tandem setup\` are visible at once (as in the dev server).
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
limit.maxIDLength:
  - value: 255
YAML
store() { # <name> <database> <max connections>
  cat <<YAML
    $1:
      sql:
        pluginName: "postgres12"
        databaseName: "$2"
        connectAddr: "127.0.0.1:$P_PG"
        connectProtocol: "tcp"
        user: "temporal"
        password: "$pw"
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: "1h"
YAML
}
service() { # <name> <grpc port> <membership port> [http port]
  printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnIP: "127.0.0.1"\n' "$1" "$2" "$3"
  if [ -n "${4:-}" ]; then printf '      httpPort: %s\n' "$4"; fi
}
{
  cat <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
YAML
  store postgres-default temporal 40
  store postgres-visibility temporal_visibility 10
  cat <<YAML
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  tls:
    frontend:
      server:
        certFile: "$tls/server.pem"
        keyFile: "$tls/server.key"
        requireClientAuth: true
        clientCaFiles: ["$tls/ca.pem"]
      client:
        serverName: "localhost"
        rootCaFiles: ["$tls/ca.pem"]
    # The server's own system workers reach the frontend like any client: with a certificate.
    systemWorker:
      certFile: "$tls/client.pem"
      keyFile: "$tls/client.key"
      client:
        serverName: "localhost"
        rootCaFiles: ["$tls/ca.pem"]
YAML
  if [ -n "$jwks" ]; then
    cat <<YAML
    # The internal-frontend grants its callers system rights (no claim mapper), so only cluster
    # members holding the internode certificate reach it, as they reach history and matching.
    internode:
      server:
        certFile: "$tls/internode.pem"
        keyFile: "$tls/internode.key"
        requireClientAuth: true
        clientCaFiles: ["$tls/internode-ca.pem"]
      client:
        serverName: "localhost"
        rootCaFiles: ["$tls/internode-ca.pem"]
  authorization:
    jwtKeyProvider:
      keySourceURIs: ["$jwks"]
      refreshInterval: 1m
    permissionsClaimName: permissions
    authorizer: default
    claimMapper: default
YAML
  fi
  echo "services:"

  service frontend "$P_FE" "$P_FE_M" "$P_HTTP"
  service history "$P_HI" "$P_HI_M"
  service matching "$P_MA" "$P_MA_M"
  service worker "$P_WO" "$P_WO_M"
  if [ -n "$jwks" ]; then service internal-frontend "$P_IF" "$P_IF_M" "$P_IF_HTTP"; fi
  cat <<YAML
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:$P_FE"
      httpAddress: "127.0.0.1:$P_HTTP"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "$dir/config/dynamicconfig/tandem.yaml"
  pollInterval: "10s"
YAML
} > "$dir/config/tandem.yaml"

# ---- start: all the services in this one process ----------------------------------------------------
# With authorization, no --allow-no-auth: the server refuses to start if the authorizer did not load.
if [ -n "$jwks" ]; then
  start=(start --service frontend --service internal-frontend --service history --service matching --service worker)
else
  start=(--allow-no-auth start)
fi
"$tools/temporal-server" --root "$dir" --config config --env tandem "${start[@]}" >"$dir/temporal.log" 2>&1 &
echo $! > "$dir/temporal.pid"
echo "ADDRESS=127.0.0.1:$P_FE"
echo "CA=$tls/ca.pem"
echo "CLIENT_CERT=$tls/client.pem"
echo "CLIENT_KEY=$tls/client.key"
echo "SERVER_NAME=localhost"
echo "PID=$(cat "$dir/temporal.pid")"
echo "PG_PID=$(head -1 "$pg/postmaster.pid")"
echo "LOG=$dir/temporal.log"
if [ -n "$jwks" ]; then
  echo "INTERNAL_FRONTEND=127.0.0.1:$P_IF"
  echo "INTERNODE_CA=$tls/internode-ca.pem"
  echo "INTERNODE_CERT=$tls/internode.pem"
  echo "INTERNODE_KEY=$tls/internode.key"
fi
