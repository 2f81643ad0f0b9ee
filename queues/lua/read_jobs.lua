--[[
  Read job hashes for a list page, cutting long fields inside Redis so that a 30 MB job
  costs the network a few kilobytes.
  KEYS[i]  job hash keys
  ARGV[1]  cap: longest field value returned whole, in bytes
  Returns, per key: { {field, value, ...}, {cut field, original length, ...} }
  A key that is not a hash returns { {}, {"__error", message} } instead of failing the page.
]]
local cap = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local hash = redis.pcall("HGETALL", key)
  if type(hash) == "table" and hash.err then
    out[i] = { {}, { "__error", hash.err } }
  else
    local cut = {}
    for j = 2, #hash, 2 do
      local size = #hash[j]
      if size > cap then
        hash[j] = string.sub(hash[j], 1, cap)
        cut[#cut + 1] = hash[j - 1]
        cut[#cut + 1] = size
      end
    end
    out[i] = { hash, cut }
  end
end
return out
