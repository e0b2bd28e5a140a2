#!/usr/bin/env bash
# Install the local Argilla stack's parts (idempotent; quick when done before):
#   - Debian packages: redis-server (and Java 17 + Maven when missing),
#   - argilla-server in its own virtualenv (.citecal/argilla/venv, click<8.2),
#   - the search engine's jars from Maven Central (.citecal/argilla/search/lib),
#   - a fixed ARGILLA_AUTH_SECRET_KEY, generated once, so UI logins survive restarts.
# Usage: services/argilla/install.sh [--with-browser | --browser-only]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

WITH_BROWSER=0
case "${1:-}" in
  --with-browser) WITH_BROWSER=1 ;;
esac

mkdir -p "$STATE" "$LOG_DIR" "$RUN_DIR" "$SEARCH_DIR"

as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (install it yourself, then re-run)"
  fi
}

APT_UPDATED=0
apt_install() {  # apt_install PACKAGE... (only the missing ones)
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand"
  log "installing Debian packages: ${missing[*]}"
  if ((APT_UPDATED == 0)); then as_root apt-get update -qq; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [[ "${1:-}" == "--browser-only" ]]; then
  [[ -x /usr/bin/chromium ]] || apt_install chromium
  exit 0
fi

# 1. system packages
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server
command -v java >/dev/null || apt_install openjdk-17-jre-headless
command -v mvn >/dev/null || apt_install maven
command -v curl >/dev/null || apt_install curl
command -v unzip >/dev/null || apt_install unzip
if ((WITH_BROWSER)) && [[ ! -x /usr/bin/chromium ]]; then apt_install chromium; fi

# 2. argilla-server in its own virtualenv
VENV_STAMP="$VENV/.citecal-argilla-server-$ARGILLA_SERVER_VERSION"
if [[ ! -f "$VENV_STAMP" ]]; then
  log "creating $VENV with argilla-server==$ARGILLA_SERVER_VERSION (first install takes a few minutes)"
  PY="${CITECAL_ARGILLA_PYTHON:-$(command -v python3.11 || command -v python3)}"
  [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  # typer<0.10 (pinned by the server) breaks with click>=8.2.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "argilla-server==$ARGILLA_SERVER_VERSION" "click<8.2"
  "$VENV/bin/python" -c "import argilla_server, opensearchpy, rq, uvicorn"
  touch "$VENV_STAMP"
fi

# 2b. PostgreSQL (CITECAL_ARGILLA_DB=postgresql): Debian's server, the server's async driver
if [[ "$ARGILLA_DB" == postgresql ]]; then
  [[ -n "$(pg_bin)" ]] || apt_install postgresql
  PG_STAMP="$VENV/.citecal-postgresql"
  if [[ ! -f "$PG_STAMP" ]]; then
    log "adding PostgreSQL drivers to $VENV"
    # argilla-server[postgresql] names asyncpg and psycopg2; the binary wheel needs no compiler.
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
      "asyncpg~=0.30.0" "psycopg2-binary~=2.9.0"
    "$VENV/bin/python" -c "import asyncpg, psycopg2"
    touch "$PG_STAMP"
  fi
fi

# 3. search engine jars from Maven Central
LIB_STAMP="$SEARCH_DIR/lib/.citecal-$SEARCH_RUNNER_ARTIFACT-$SEARCH_RUNNER_VERSION-knn-$KNN_PLUGIN_VERSION"
if [[ ! -f "$LIB_STAMP" ]]; then
  log "fetching $SEARCH_RUNNER_GROUP:$SEARCH_RUNNER_ARTIFACT:$SEARCH_RUNNER_VERSION with mvn"
  cat >"$SEARCH_DIR/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.citecal</groupId>
  <artifactId>argilla-search-engine</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>$SEARCH_RUNNER_GROUP</groupId>
      <artifactId>$SEARCH_RUNNER_ARTIFACT</artifactId>
      <version>$SEARCH_RUNNER_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.opensearch.plugin</groupId>
      <artifactId>opensearch-knn</artifactId>
      <version>$KNN_PLUGIN_VERSION</version>
      <type>zip</type>
    </dependency>
  </dependencies>
</project>
POM
  rm -rf "$SEARCH_DIR/lib"
  (cd "$SEARCH_DIR" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$SEARCH_DIR/lib") \
    >"$LOG_DIR/mvn.log" 2>&1 || { tail -n 20 "$LOG_DIR/mvn.log" >&2; die "mvn failed (log: $LOG_DIR/mvn.log)"; }
  # argilla-server's OpenSearch engine creates indices with index.knn: the k-NN plugin (its Java
  # part; vectors use the Lucene engine, so no native library is needed) goes on the classpath.
  mkdir -p "$SEARCH_DIR/lib/knn"
  (cd "$SEARCH_DIR/lib/knn" && unzip -q -o "../opensearch-knn-$KNN_PLUGIN_VERSION.zip" '*.jar' &&
    rm -f "../opensearch-knn-$KNN_PLUGIN_VERSION.zip")
  touch "$LIB_STAMP"
fi

# 4. fixed auth secret
if [[ ! -s "$SECRET_FILE" ]]; then
  (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(32))' >"$SECRET_FILE")
  log "generated $SECRET_FILE"
fi

log "installed under $STATE"
