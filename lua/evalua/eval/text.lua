-- ev.text: answer metrics over UTF-8 text, computed in C (metrics/text.c).
-- The C functions are exported as they are, so an argument error points at
-- the caller's line. Reference: docs/text.md.
--   exact_match(pred, gold_or_golds [, {normalize = true}]) -> 1 | 0
--   token_f1(pred, gold_or_golds)          SQuAD v2.0 token F1, max over golds
--   rouge_l(pred, gold_or_golds)           LCS F1 over the same tokens
--   edit_similarity(pred, gold_or_golds [, {normalize = true}])
--   edit_distance(a, b [, bound]) -> Levenshtein distance, nil above bound
--   <metric>_batch(preds, golds [, opts])  golds[i]: a string or a list
--   normalize(s) -> string;  tokens(s) -> list
local c = require "evalua._text"

local M = {}
for name, f in pairs(c) do M[name] = f end
return M
