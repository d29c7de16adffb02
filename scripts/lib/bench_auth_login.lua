-- wrk script for scripts/bench-auth: POST /api/auth/login as $BENCH_USERNAME / $BENCH_PASSWORD of app $BENCH_APP_KEY.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-App-Key"] = os.getenv("BENCH_APP_KEY")
wrk.body = string.format('{"username":"%s","password":"%s","platform":"web","deviceModel":"wrk"}',
    os.getenv("BENCH_USERNAME"), os.getenv("BENCH_PASSWORD"))
