--[[
  Read the fields of job hashes for a list page, cutting long values inside Redis so that a
  30 MB job costs the network a few kilobytes.
  KEYS[i]    job hash keys
  ARGV[1]    cap: longest value returned whole, in bytes
  ARGV[2..]  the fields to read (HMGET: stack traces and unknown fields are not read)
  Returns, per key: { {value or false, ...}, {cut field index, original length, ...} }
  A key that is not a hash returns { {}, {0, message} } instead of failing the page.
]]
local cap = tonumber(ARGV[1])
local count = #ARGV - 1
local out = {}
for i, key in ipairs(KEYS) do
  local values = redis.pcall("HMGET", key, unpack(ARGV, 2))
  if values.err then
    out[i] = { {}, { 0, values.err } }
  else
    local cut = {}
    for j = 1, count do
      local value = values[j]
      if value and #value > cap then
        values[j] = string.sub(value, 1, cap)
        cut[#cut + 1] = j
        cut[#cut + 1] = #value
      end
    end
    out[i] = { values, cut }
  end
end
return out
