-- wrk script for scripts/bench: GET /bench/accounts/<random aid in 1..BENCH_AIDS> (pgbench -s 10: 1,000,000 rows).
local max_aid = tonumber(os.getenv("BENCH_AIDS") or "1000000")
local next_id = 0

function setup(thread)
    next_id = next_id + 1
    thread:set("id", next_id)
end

function init(args)
    math.randomseed(os.time() * 1000 + (id or 0))
end

function request()
    return wrk.format("GET", "/bench/accounts/" .. math.random(1, max_aid))
end
