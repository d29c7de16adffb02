-- wrk script of scripts/bench-social: every connection walks the friend list's pages in turn (one GET per page,
-- the paths in BENCH_PAGES_FILE, one per line), with the owner's token (BENCH_TOKEN).
local paths = {}
local token = os.getenv("BENCH_TOKEN")
for line in io.lines(os.getenv("BENCH_PAGES_FILE")) do paths[#paths + 1] = line end
local counter = 0

function setup(thread)
    thread:set("offset", counter)
    counter = counter + 7
end

function init(args)
    next_page = offset % #paths
end

function request()
    next_page = next_page % #paths + 1
    return wrk.format("GET", paths[next_page], { ["Authorization"] = "Bearer " .. token })
end

function response(status, headers, body)
    if status ~= 200 then error("GET answered " .. status .. ": " .. body) end
end
