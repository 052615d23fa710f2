-- Model families, for the warning that a judge grades answers of its own
-- family: judges are known to prefer text their own family wrote
-- (self-preference). A name belongs to the first family one of whose
-- patterns it contains (lower-cased; "openai/gpt-4o" and "gpt-4o-mini" are
-- both OpenAI GPT). The list is a heuristic: extend F.families.
local F = {}

F.families = {
  { name = "OpenAI GPT", patterns = { "gpt", "^o%d", "/o%d", "chatgpt", "davinci", "openai" } },
  { name = "Anthropic Claude", patterns = { "claude", "anthropic" } },
  { name = "Google Gemini", patterns = { "gemini", "gemma", "palm", "bison", "google" } },
  { name = "Meta Llama", patterns = { "llama", "meta%-" } },
  { name = "Mistral", patterns = { "mistral", "mixtral", "codestral", "ministral", "magistral", "pixtral" } },
  { name = "Alibaba Qwen", patterns = { "qwen", "qwq" } },
  { name = "DeepSeek", patterns = { "deepseek" } },
  { name = "Microsoft Phi", patterns = { "^phi%-", "/phi%-" } },
  { name = "Cohere Command", patterns = { "command%-", "cohere" } },
  { name = "xAI Grok", patterns = { "grok" } },
}

-- The family of a model or provider name, or nil.
function F.of(name)
  if type(name) ~= "string" then return nil end
  local low = name:lower()
  for _, f in ipairs(F.families) do
    for _, p in ipairs(f.patterns) do
      if low:find(p) then return f.name end
    end
  end
end

-- Distinct values of the data set's `model` and `provider` columns.
local function systems_of(ds)
  local out = {}
  for _, field in ipairs { "model", "provider" } do
    local _, values = ds.table:codes(field, "")
    for _, v in ipairs(values) do
      if v ~= "" then out[#out + 1] = v end
    end
  end
  return out
end

-- The warning for a judge of model `judge_model` over data set ds when a
-- system under test (data key `model` or `provider`) is of its family;
-- nil when none is.
function F.warning(judge_model, ds)
  local family = F.of(judge_model)
  if not family then return nil end
  local same = {}
  for _, name in ipairs(systems_of(ds)) do
    if F.of(name) == family then same[#same + 1] = name end
  end
  if #same == 0 then return nil end
  return ("the judge (%s) is of the same family (%s) as the system under test (%s): judges tend to prefer "
    .. "answers of their own family; a judge of another family checks this"):format(judge_model, family,
    table.concat(same, ", "))
end

return F
