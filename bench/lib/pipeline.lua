-- wrk script: HTTP/1.1 pipelining. Each request() returns one buffer holding
-- `depth` copies of the request (built once per thread with wrk.format), so
-- wrk writes them in one go and waits for as many responses before the next
-- batch. The depth is the script's first argument: wrk ... URL -- 16
local depth = 16
local batch

function init(args)
    depth = tonumber(args[1]) or depth
    local requests = {}
    for i = 1, depth do
        requests[i] = wrk.format()
    end
    batch = table.concat(requests)
end

function request()
    return batch
end
