-- wrk script for scripts/bench-updates: every request carries `X-App-Key: $BENCH_APP_KEY`. With BENCH_DEVICE_IDS=N
-- each request asks as one of N device ids at random (a partial rollout then hashes the id per request); the
-- path and query otherwise stay as given on the wrk command line.
wrk.headers["X-App-Key"] = os.getenv("BENCH_APP_KEY") or ""
local devices = tonumber(os.getenv("BENCH_DEVICE_IDS") or "0")

if devices > 0 then
    math.randomseed(os.time())
    request = function()
        return wrk.format(nil, wrk.path .. "&deviceId=device-" .. math.random(1, devices))
    end
end
