local M = {}
function M.add(A) end
return M
