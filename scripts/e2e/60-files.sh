#!/usr/bin/env bash
# Files end to end against the real binary: a 50 MiB upload (raw PUT and multipart, both streamed by curl) and its
# download through the signed URL, byte for byte, while the server's resident memory is sampled every 50 ms: it
# must stay below 64 MiB above the idle figure. Also a cut-off upload (no spool file, no row) and Range/HEAD.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

db=$(e2e_fresh_db)
files_dir="$E2E_TMP/files"
parley_start "$db" PARLEY_FILES_DIR="$files_dir"

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-files) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
register=$(curl -sS --max-time 30 -H "X-App-Key: $app_key" -H 'Content-Type: application/json' \
    -d '{"username":"filer","password":"correct horse","platform":"ios"}' "$PARLEY_BASE/api/auth/register")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["accessToken"])' <<<"$register") \
    || fail "register failed: $register"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$PARLEY_PID/status"; }
# Samples the server's RSS every 50 ms into a file until killed.
sample_rss() {
    while kill -0 "$PARLEY_PID" 2>/dev/null; do rss_kib >>"$1" || true; sleep 0.05; done
}
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['data']['$1'])"; }

big="$E2E_TMP/big.bin"
head -c $((50 * 1024 * 1024)) /dev/urandom >"$big"
big_sha=$(sha256sum "$big" | awk '{ print $1 }')

# Warm up (first upload allocates the pools), then take the idle figure.
curl -sS --max-time 30 -X PUT -H "Authorization: Bearer $token" --data-binary 'warm up' "$PARLEY_BASE/api/files" >/dev/null
sleep 0.5
idle=$(rss_kib)
samples="$E2E_TMP/rss.txt"
: >"$samples"
sample_rss "$samples" &
sampler=$!

put_out=$(curl -sS --max-time 120 -X PUT -H "Authorization: Bearer $token" -H 'X-File-Name: big.bin' \
    -H 'Content-Type: application/octet-stream' --data-binary "@$big" "$PARLEY_BASE/api/files") || fail "PUT failed"
url=$(json_field url <<<"$put_out") || fail "PUT answer: ${put_out:0:500}"
[[ $(json_field hash <<<"$put_out") == "$big_sha" ]] || fail "PUT hash mismatch: $put_out"
[[ $(json_field size <<<"$put_out") == $((50 * 1024 * 1024)) ]] || fail "PUT size mismatch: $put_out"
curl -sS --max-time 120 -o "$E2E_TMP/down.bin" "$url" || fail "download failed"
cmp -s "$big" "$E2E_TMP/down.bin" || fail "downloaded bytes differ from the upload"

post_out=$(curl -sS --max-time 120 -H "Authorization: Bearer $token" -F "file=@$big;filename=big2.bin" \
    "$PARLEY_BASE/api/files") || fail "multipart POST failed"
url2=$(json_field url <<<"$post_out") || fail "POST answer: ${post_out:0:500}"
[[ $(json_field hash <<<"$post_out") == "$big_sha" ]] || fail "multipart hash mismatch: $post_out"
curl -sS --max-time 120 -o "$E2E_TMP/down2.bin" "$url2" || fail "download 2 failed"
cmp -s "$big" "$E2E_TMP/down2.bin" || fail "downloaded bytes (multipart) differ from the upload"

kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
peak=$(sort -n "$samples" | tail -n 1)
growth_kib=$((peak - idle))
((growth_kib < 64 * 1024)) || fail "resident memory grew by $((growth_kib / 1024)) MiB during 50 MiB transfers (limit 64)"
blobs=$(find "$files_dir/blobs" -type f | wc -l)
((blobs == 2)) || fail "expected 2 blobs (warm-up and the 50 MiB file stored once), found $blobs"

# Range and HEAD through curl.
range=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code} %{size_download}' -H 'Range: bytes=1000-1999' "$url")
[[ $range == "206 1000" ]] || fail "Range answer: $range"
head_len=$(curl -sS --max-time 10 -I "$url" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-length" { print $2 }')
[[ $head_len == $((50 * 1024 * 1024)) ]] || fail "HEAD Content-Length: $head_len"

# An upload cut off midway: curl gives up after 1 s of a 50 MiB body sent at 5 MiB/s.
curl -sS --max-time 1 --limit-rate 5M -X PUT -H "Authorization: Bearer $token" --data-binary "@$big" \
    "$PARLEY_BASE/api/files" >/dev/null 2>&1 || true
for _ in $(seq 1 50); do
    [[ -z $(find "$files_dir/spool" -type f) ]] && break
    sleep 0.1
done
[[ -z $(find "$files_dir/spool" -type f) ]] || fail "a cut-off upload left spool files: $(ls "$files_dir/spool")"
rows=$(pg_psql "$E2E_PG_PORT" "${db##*/}" -tAc "SELECT count(*) FROM files")
((rows == 3)) || fail "expected 3 file rows (warm-up, PUT, POST), found $rows"

parley_stop_clean 15
pass "50 MiB PUT + multipart + signed downloads byte-identical, RSS idle $((idle / 1024)) MiB, peak +$((growth_kib / 1024)) MiB over $(wc -l <"$samples") samples; dedup 1 blob; Range/HEAD; cut-off upload left nothing"
