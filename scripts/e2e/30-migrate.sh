#!/usr/bin/env bash
# Migrations: two concurrent `parley migrate` runs apply each file exactly once; editing an applied file is
# refused with a checksum error; a file added later is applied by the next run.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

db_url=$(e2e_fresh_db)
db_name=${db_url##*/}
dir="$E2E_TMP/migrations"
mkdir -p "$dir"
if [[ -d $PARLEY_ROOT/migrations ]]; then
    cp -R "$PARLEY_ROOT/migrations/." "$dir/"
fi
cat >"$dir/9000_e2e_counter.sql" <<'SQL'
CREATE TABLE e2e_counter (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text NOT NULL);
INSERT INTO e2e_counter (note) VALUES ('applied once');
SQL

sql() {
    pg_psql "$E2E_PG_PORT" "$db_name" -tAc "$1"
}

count_files() {
    find "$dir" -maxdepth 1 -type f -name '*.sql' | wc -l
}

migrate() { # migrate LOGFILE -> exit status of `parley migrate`
    local out=$1
    env DATABASE_URL="$db_url" PARLEY_MIGRATIONS_DIR="$dir" "$PARLEY_BIN" migrate </dev/null >"$out" 2>&1
}

E2E_LOGS+=("$E2E_TMP/migrate-a.log" "$E2E_TMP/migrate-b.log" "$E2E_TMP/migrate-tampered.log"
    "$E2E_TMP/migrate-later.log" "$E2E_TMP/migrate-noop.log")

# 1. Two concurrent runs.
migrate "$E2E_TMP/migrate-a.log" &
pid_a=$!
migrate "$E2E_TMP/migrate-b.log" &
pid_b=$!
status_a=0 status_b=0
wait "$pid_a" || status_a=$?
wait "$pid_b" || status_b=$?
((status_a == 0 && status_b == 0)) || fail "concurrent migrate runs exited $status_a and $status_b (expected 0 and 0)"

rows=$(sql "SELECT count(*) FROM e2e_counter")
[[ $rows == 1 ]] || fail "e2e_counter has $rows rows after two concurrent runs (expected exactly 1)"
files=$(count_files)
applied=$(sql "SELECT count(*) FROM schema_migrations")
[[ $applied == "$files" ]] || fail "schema_migrations has $applied rows for $files migration files"

# 2. An applied file whose content changed must be refused.
cp "$dir/9000_e2e_counter.sql" "$E2E_TMP/9000.orig"
printf -- '-- edited after it was applied\n' >>"$dir/9000_e2e_counter.sql"
status=0
migrate "$E2E_TMP/migrate-tampered.log" || status=$?
((status != 0)) || fail "migrate accepted an applied migration whose file changed (exit 0)"
grep -qi checksum "$E2E_TMP/migrate-tampered.log" \
    || fail "migrate exited $status for a changed file but did not mention \"checksum\""
rows=$(sql "SELECT count(*) FROM e2e_counter")
[[ $rows == 1 ]] || fail "e2e_counter has $rows rows after the refused run (expected 1)"

# 3. Restore it; a file added later is applied by the next run.
cp "$E2E_TMP/9000.orig" "$dir/9000_e2e_counter.sql"
cat >"$dir/9001_e2e_later.sql" <<'SQL'
CREATE TABLE e2e_later (id int PRIMARY KEY);
INSERT INTO e2e_later VALUES (42);
SQL
status=0
migrate "$E2E_TMP/migrate-later.log" || status=$?
((status == 0)) || fail "migrate with a new file exited $status"
[[ $(sql "SELECT id FROM e2e_later") == 42 ]] || fail "the migration added later was not applied"
applied=$(sql "SELECT count(*) FROM schema_migrations")
[[ $applied == "$(count_files)" ]] || fail "schema_migrations has $applied rows for $(count_files) files"
[[ $(sql "SELECT count(*) FROM e2e_counter") == 1 ]] || fail "e2e_counter changed on the later run"

# 4. Nothing to do: still exit 0.
migrate "$E2E_TMP/migrate-noop.log" || fail "migrate with nothing to apply exited non-zero"

pass "2 concurrent runs applied $files files once; changed file refused with a checksum error; later file applied"
