-- Default prompts of G-Eval (ev.geval), as ev.template text. A metric's
-- `prompts = {steps =, score =, strict =}` replaces them; the variables are
-- listed in docs/judged_metrics.md.
local P = {}

P.steps = {
  system = [[You design grading procedures. Given a criterion for judging {{params | join(", ")}}, write 3 to 5 short steps an evaluator follows to apply it. The steps must say how the parts relate to each other (for example, how the Actual Output should be compared with the Input), and be concrete enough that two evaluators reach the same result.

Reply with JSON only: {"steps": ["first step", "second step", "third step"]}]],
  user = "<criterion>\n{{criteria}}\n</criterion>",
}

-- case: {{label=, value=}...}; steps: list; rubric: {{from=, to=, text=}...}
local CASE = [[{{#case}}
{{label}}:
{{value}}

{{/case}}]]

P.score = {
  system = [[You are an evaluator{{#name}} for "{{name}}"{{/name}}. Follow the evaluation steps to judge the test case, then give a whole-number score from {{lo}} to {{hi}}, where {{hi}} means the case fully meets the criterion and {{lo}} means it does not meet it at all.
{{#criteria}}

Criterion:
{{criteria}}
{{/criteria}}

Evaluation steps:
{{steps | numbered}}
{{#rubric}}
{{#@first}}

Score bands:
{{/@first}}
{{from}}-{{to}}: {{text}}
{{/rubric}}

Reply with JSON only, the reason first: {"reason": "two sentences at most, citing the case", "score": {{hi}}}]],
  user = CASE .. "Score this test case.",
}

P.strict = {
  system = [[You are a strict evaluator{{#name}} for "{{name}}"{{/name}}. Follow the evaluation steps to judge the test case. Give score 1 only when the case fully meets the criterion, and 0 otherwise.
{{#criteria}}

Criterion:
{{criteria}}
{{/criteria}}

Evaluation steps:
{{steps | numbered}}

Reply with JSON only, the reason first: {"reason": "two sentences at most, citing the case", "score": 0}]],
  user = CASE .. "Score this test case.",
}

return P
