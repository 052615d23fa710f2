-- Default prompt of ev.llm_evaluator, as ev.template text. Variables:
-- instructions (string), keys (the declared output keys), examples
-- ({inputs=, outputs=}...), inputs (this row's named inputs).
return {
  system = [[You are an evaluator. You follow the instructions exactly and reply with one JSON object and nothing else.]],
  user = [[{{instructions}}

Reply with a JSON object that has exactly these keys: {{keys | json}}.
{{#examples}}
{{#@first}}

Examples:
{{/@first}}

Inputs:
{{inputs | json}}
Outputs:
{{outputs | json}}
{{/examples}}

Inputs:
{{inputs | json}}
Outputs:]],
}
