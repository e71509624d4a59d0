#!/usr/bin/env bash
# The one test command (`npm run test:all`, also what .ci/run runs): from a fresh machine to the
# whole suite. It
#   1. installs the Debian packages the tests use when they are missing — when it may (root with
#      apt-get); otherwise it prints the exact command to run and stops;
#   2. starts Redis and PostgreSQL when they do not answer on 127.0.0.1:6379 / :5432;
#   3. runs `npm ci` when node_modules is missing or does not match package-lock.json;
#   4. runs `npm test` (build, type-check, lint, architecture check, the whole Vitest suite).
# Non-interactive: works with CI=true and no stdin. `--check` only says what it would do.
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
  --check) check=true ;;
  '') ;;
  *)
    echo "usage: scripts/test-all.sh [--check]" >&2
    exit 2
    ;;
esac

say() { printf '== %s\n' "$*"; }
fail() {
  printf 'error: %s\n' "$1" >&2
  shift
  for line in "$@"; do printf '  %s\n' "$line" >&2; done
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }

# --- Node.js ---------------------------------------------------------------------------------
command -v node >/dev/null || fail 'Node.js >= 20.19 is not installed' \
  'install it from https://nodejs.org or your distribution (Debian: apt-get install nodejs npm)'
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
  fail "Node.js $(node --version) is too old: the tests need >= 20.19"
command -v npm >/dev/null || fail 'npm is not installed' 'Debian: apt-get install npm'
say "node $(node --version), npm $(npm --version 2>/dev/null)"

# --- 1. Debian packages ------------------------------------------------------------------------
# Redis (global locks), util-linux flock (cross-check of kernel locks), openssl (a self-signed
# TLS server), curl (benchmarks), Debian's cron (the real cron end-to-end test), a C++ toolchain
# (fs-ext's flock(2) and better-sqlite3 bindings), systemd-analyze (unit checks), PostgreSQL
# (the HA store; private clusters use its initdb and pg_ctl), Chromium's headless shell (the
# web UI's browser tests), strace (the token file's fsync is checked on the system calls),
# promtool from Debian's prometheus (the alert rules' checks; the server it also brings is
# stopped and disabled: nothing listens on :9090 after this).
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v flock >/dev/null || need+=(util-linux)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
command -v cron >/dev/null || [ -x /usr/sbin/cron ] || need+=(cron)
command -v g++ >/dev/null || need+=(g++ make python3)
command -v systemd-analyze >/dev/null || need+=(systemd)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium-headless-shell >/dev/null || need+=(chromium-headless-shell)
command -v strace >/dev/null || need+=(strace)
command -v promtool >/dev/null || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  if ! is_root || ! command -v apt-get >/dev/null; then
    fail "the tests need these missing packages: ${need[*]}; install them, then run this again:" \
      "sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${need[*]}"
  fi
  if $check; then
    say "would run: apt-get update && apt-get install -y ${need[*]}"
  else
    say "installing ${need[*]}"
    apt-get update -qq </dev/null
    others=()
    for p in "${need[@]}"; do [ "$p" = prometheus ] || others+=("$p"); done
    if [ ${#others[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${others[@]}" </dev/null
    fi
    # only promtool is wanted from prometheus (no node exporter): stop the server it may start
    if [ ${#others[@]} -lt ${#need[@]} ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus </dev/null
      if [ -d /run/systemd/system ]; then
        systemctl disable --now prometheus >/dev/null 2>&1 || true
      elif [ -x /etc/init.d/prometheus ]; then
        /etc/init.d/prometheus stop >/dev/null 2>&1 || true
        update-rc.d prometheus disable >/dev/null 2>&1 || true
      fi
    fi
  fi
fi

# --- 2. Redis and PostgreSQL -------------------------------------------------------------------
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() {
  for _ in $(seq 1 100); do answers "$1" && return 0; sleep 0.1; done
  fail "$2 did not answer on 127.0.0.1:$1 after it was started"
}

if ! answers 6379; then
  redis=(redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no)
  if $check; then
    say "would start Redis: ${redis[*]}"
  else
    say 'starting Redis'
    "${redis[@]}" </dev/null >/dev/null
    wait_for 6379 Redis
  fi
fi

if ! answers 5432; then
  version=$(ls /etc/postgresql 2>/dev/null | sort | tail -n 1 || true)
  [ -n "$version" ] || $check || fail 'PostgreSQL is installed but has no cluster in /etc/postgresql' \
    'create one: sudo pg_createcluster --start "$(ls /usr/lib/postgresql | sort | tail -n 1)" main'
  pg=(pg_ctlcluster --skip-systemctl-redirect "${version:-<version>}" main start)
  if $check; then
    say "would start PostgreSQL: ${pg[*]}"
  elif ! is_root && [ "$(id -un)" != postgres ]; then
    fail 'PostgreSQL does not answer on 127.0.0.1:5432; start it as root, then run this again:' \
      "sudo ${pg[*]}"
  else
    say 'starting PostgreSQL'
    "${pg[@]}" </dev/null
    wait_for 5432 PostgreSQL
  fi
fi

# --- 3. node_modules ---------------------------------------------------------------------------
# Stale = a package of package-lock.json missing (optional ones excepted: other platforms') or
# at another version; comparing versions, not file times, so a copied checkout is not rebuilt.
stale=$(
  node -e '
    const { readFileSync } = require("node:fs");
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      if (path === "" || entry.link) continue;
      let version;
      try {
        version = JSON.parse(readFileSync(`${path}/package.json`, "utf8")).version;
      } catch {
        if (entry.optional) continue;
        console.log(`${path} is missing`);
        process.exit(0);
      }
      if (version !== entry.version) {
        console.log(`${path} is ${version}, package-lock.json says ${entry.version}`);
        process.exit(0);
      }
    }
  '
)
if [ -n "$stale" ]; then
  if $check; then
    say "would run: npm ci ($stale)"
  else
    say "npm ci ($stale)"
    npm ci --no-audit --no-fund </dev/null
  fi
fi

# --- 4. the suite ------------------------------------------------------------------------------
if $check; then
  say 'would run: npm test'
  exit 0
fi
say 'npm test'
exec npm test </dev/null
