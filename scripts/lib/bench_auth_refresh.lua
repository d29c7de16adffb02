-- wrk script for scripts/bench-auth: chains of POST /api/auth/refresh. Refresh tokens are single-use, so each
-- wrk thread owns one session (its starting token comes from $BENCH_REFRESH_TOKENS, space-separated) and one
-- connection (-c equal to -t), and always sends the token the previous answer returned.
local tokens = {}
for token in string.gmatch(os.getenv("BENCH_REFRESH_TOKENS") or "", "%S+") do table.insert(tokens, token) end
local next_index = 0

function setup(thread)
    next_index = next_index + 1
    thread:set("token", tokens[next_index])
end

function request()
    return wrk.format("POST", "/api/auth/refresh", { ["Content-Type"] = "application/json" },
        '{"refreshToken":"' .. token .. '"}')
end

function response(status, headers, body)
    local fresh = string.match(body, '"refreshToken":"(rt_[^"]+)"')
    if fresh then token = fresh end
end
