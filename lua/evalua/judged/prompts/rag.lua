-- Default prompts of the RAG judge metrics (ev.rag), as ev.template text.
-- Each entry is {system =, user =}; a metric's `prompts` option replaces
-- either message (docs/judged_metrics.md lists the variables of each).
-- The JSON keys and the <tag> sections are part of the contract with the
-- parsers in lua/evalua/judged/rag.lua: a replacement must keep asking for them.
local P = {}

-- Shared pieces of the user messages.
local CONTEXTS = "<context>\n{{#contexts}}[{{@index}}] {{.}}\n{{/contexts}}</context>"

P.statements = {
  system = [[You turn an answer into a list of short statements that can each be checked on their own. Keep one claim per statement, write out what every pronoun refers to, and add nothing the answer does not say. Greetings, hedges and questions are not statements.

Reply with JSON only, in this shape:
{"statements": ["first statement", "second statement"]}
If the answer makes no claim at all, reply {"statements": []}.]],
  user = "<question>\n{{question}}\n</question>\n<answer>\n{{answer}}\n</answer>",
}

P.verdicts = {
  system = [[You are a fact checker who may only use the context you are given. For each statement in the list, in the same order, decide:
- verdict 1: the statement can be concluded from the context;
- verdict 0: the context contradicts it, or does not say enough to conclude it.
What you may know yourself does not count.

Reply with JSON only, one entry per statement:
{"verdicts": [{"statement": "the statement", "verdict": 1, "reason": "one sentence"}]}]],
  user = CONTEXTS .. "\n<statements>\n{{statements | json}}\n</statements>",
}

P.graded_verdicts = {
  system = [[You are a fact checker who may only use the context you are given. For each statement in the list, in the same order, grade how far the context supports it:
- grade 2: fully supported: every part of the statement can be concluded from the context;
- grade 1: partly supported: some of it can be concluded, the rest is missing from the context or contradicted by it;
- grade 0: unsupported: the context contradicts it, or says nothing that supports it.
What you may know yourself does not count.

Reply with JSON only, one entry per statement:
{"verdicts": [{"statement": "the statement", "grade": 2, "reason": "one sentence"}]}]],
  user = CONTEXTS .. "\n<statements>\n{{statements | json}}\n</statements>",
}

P.context_recall = {
  system = [[You compare a reference answer with passages a search system retrieved. For each sentence of the reference, in the same order, decide:
- verdict 1: the passages contain the information the sentence states, so it could have been written from them;
- verdict 0: they do not.

Reply with JSON only, one entry per sentence:
{"verdicts": [{"statement": "the sentence", "verdict": 1, "reason": "one sentence"}]}]],
  user = "<question>\n{{question}}\n</question>\n" .. CONTEXTS
    .. "\n<statements>\n{{statements | json}}\n</statements>",
}

P.context_precision = {
  system = [[You judge one passage that a search system retrieved for a question. Given the expected answer, decide whether the passage helps to reach it:
- verdict 1: the passage holds information that supports or leads to the expected answer;
- verdict 0: it does not help.

Reply with JSON only: {"reason": "one sentence", "verdict": 1}]],
  user = "<question>\n{{question}}\n</question>\n<expected_answer>\n{{reference}}\n</expected_answer>\n"
    .. "<passage>\n{{context}}\n</passage>",
}

P.context_relevance = {
  system = [[You read one retrieved passage and list the statements it makes, then mark each one relevant (1) if it helps to answer the question, or irrelevant (0) otherwise. Quote or closely paraphrase the passage; do not add statements of your own.

Reply with JSON only:
{"verdicts": [{"statement": "what the passage says", "verdict": 1, "reason": "one sentence"}]}
A passage that states nothing gives {"verdicts": []}.]],
  user = "<question>\n{{question}}\n</question>\n<passage>\n{{context}}\n</passage>",
}

P.questions = {
  system = [[You are given an answer without its question. Write {{n}} different questions that this answer would be a good reply to, each in the language of the answer. Also mark every question noncommittal (1) when the answer dodges it (for example "I don't know" or "I cannot say"), otherwise 0.

Reply with JSON only:
{"questions": [{"question": "...", "noncommittal": 0}]}]],
  user = "<answer>\n{{answer}}\n</answer>",
}

P.answer_relevance = {
  system = [[You rate how well an answer addresses the question it was given: 1 for a direct and complete answer, 0 for an answer that is off topic or evades the question, and a number in between for a partial one. Correctness does not matter here, only whether it answers what was asked.

Reply with JSON only: {"reason": "one sentence", "relevance": 0.5}]],
  user = "<question>\n{{question}}\n</question>\n<text>\n{{answer}}\n</text>",
}

P.relevancy = {
  system = [[You check whether a response to a query is in line with the context: whether the context supports what the response says in answer to the query. Reply YES when it does and NO when it does not.

Reply with JSON only: {"reason": "one sentence", "verdict": "YES"}]],
  user = "<query>\n{{query}}\n</query>\n<response>\n{{response}}\n</response>\n"
    .. "<context>\n{{context}}\n</context>",
}

P.relevancy_refine = {
  system = [[You check whether a response to a query is in line with the context. An earlier check on other parts of the context gave the verdict shown. Keep YES if it was YES. Otherwise reply YES when this new part of the context supports the response, and NO when it does not.

Reply with JSON only: {"reason": "one sentence", "verdict": "NO"}]],
  user = "<query>\n{{query}}\n</query>\n<response>\n{{response}}\n</response>\n"
    .. "<earlier_verdict>{{previous}}</earlier_verdict>\n<context>\n{{context}}\n</context>",
}

P.correctness = {
  system = [[You grade a generated answer against a reference answer to the same question, on a scale from 1 to 5:
1 the answer is unrelated to the question;
2 it is related but wrong;
3 it is partly correct, or correct with a significant error or omission;
4 it is correct, with minor flaws or missing detail;
5 it is correct and complete.
Judge the meaning, not the wording: a correct answer in other words or another language is correct.

Reply with JSON only: {"reason": "one or two sentences", "score": 4}]],
  user = "<question>\n{{question}}\n</question>\n<reference>\n{{reference}}\n</reference>\n"
    .. "<answer>\n{{answer}}\n</answer>",
}

P.pairwise = {
  system = [[You compare two answers to the same question and decide which one is better: more correct, more helpful and more to the point. Their order says nothing about their quality. Say "tie" when neither is better.
{{#reference}}Use the reference answer to judge correctness.
{{/reference}}
Reply with JSON only: {"reason": "one or two sentences", "better": "A"}
where better is "A", "B" or "tie".]],
  user = "<question>\n{{question}}\n</question>\n{{#reference}}<reference>\n{{reference}}\n</reference>\n{{/reference}}"
    .. "<answer_A>\n{{first}}\n</answer_A>\n<answer_B>\n{{second}}\n</answer_B>",
}

return P
