-- wrk script for scripts/bench-messaging: POST /api/im/messages on behalf of many senders.
--
-- Arguments (after `--`): FILE CHAT_TYPE TAG THREADS
--   FILE       one line per sender: `<access token><TAB><toId>` (a peer user id, or a group id)
--   CHAT_TYPE  single | group
--   TAG        names the run (contender and round); it starts every clientMsgId, so ids are unique across runs
--   THREADS    wrk's -t, so that each thread knows which senders are its own
--
-- Thread t (1-based) sends for senders t, t + THREADS, t + 2 * THREADS, ... in turn, so with as many connections
-- as senders each connection carries about one sender's traffic. clientMsgId = TAG-t<thread>-<counter>: unique
-- across threads (thread number), within a thread (counter) and across runs (TAG).
local next_id = 0

function setup(thread)
    next_id = next_id + 1
    thread:set("id", next_id)
end

local mine = {}
local position = 1
local counter = 0
local chat_type, tag

function init(args)
    local file, threads = args[1], tonumber(args[4] or "1")
    chat_type, tag = args[2] or "single", args[3] or "run"
    local handle = assert(io.open(file, "r"), "cannot open " .. tostring(file))
    local index = 0
    for line in handle:lines() do
        local token, to = string.match(line, "^([^\t]+)\t([^\t]+)$")
        if token then
            if index % threads == (id - 1) % threads then
                table.insert(mine, {
                    to = to,
                    headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
                })
            end
            index = index + 1
        end
    end
    handle:close()
    assert(#mine > 0, "thread " .. id .. " has no sender (more threads than senders?)")
end

function request()
    local sender = mine[position]
    position = position % #mine + 1
    counter = counter + 1
    local body = '{"toId":"' .. sender.to .. '","chatType":"' .. chat_type .. '","msgType":"text","content":"hello '
        .. counter .. '","clientMsgId":"' .. tag .. '-t' .. id .. '-' .. counter .. '"}'
    return wrk.format("POST", "/api/im/messages", sender.headers, body)
end
