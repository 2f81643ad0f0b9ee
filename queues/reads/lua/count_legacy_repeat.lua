--[[
  Count a queue's legacy repeatable jobs: members of the repeat sorted set without a hash of
  their own. Job schedulers (BullMQ >= 5.16) keep one hash per id, <repeat key>:<id>; the
  repeatable jobs of older BullMQ versions are bare members (name:id:endDate:tz:pattern).
  KEYS[1]  the queue's repeat sorted set
  ARGV[1]  how many members to look at, from the next to run (a bound on the cost)
  Returns {the number of those without a hash} (one row for the one key). The hashes share the queue's keys' hash tag
  (BullMQ asks for one on a Redis Cluster), so they live where the set does.
]]
local members = redis.call("ZRANGE", KEYS[1], 0, tonumber(ARGV[1]) - 1)
local legacy = 0
for _, member in ipairs(members) do
  if redis.call("EXISTS", KEYS[1] .. ":" .. member) == 0 then
    legacy = legacy + 1
  end
end
return {legacy}
