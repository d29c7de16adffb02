-- wrk script for scripts/bench-auth: every request carries `Authorization: Bearer $BENCH_TOKEN`, so the routes with
-- and without token verification receive byte-identical requests.
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "")
