-- ev.vector: dot product and cosine similarity of embeddings, computed in C
-- (metrics/vector.c). Reference: docs/vector.md.
--   dot(a, b), cosine(a, b)
--   dot_many(query, vectors), cosine_many(query, vectors)  -> list
--   dot_paired(as, bs), cosine_paired(as, bs)               -> list
local c = require "evalua._vector"

local M = {}
for name, f in pairs(c) do M[name] = f end
return M
