-- Default prompts of the judged agent metrics (ev.agent), as ev.template
-- text. A metric's `prompts = {step = ...}` replaces either message of a
-- step (docs/agents.md lists each step's variables). The JSON keys and the
-- <tag> sections are the contract with the parsers in agent/judged.lua and
-- agent/conversation.lua: a replacement must keep asking for them.
local P = {}

local CONVERSATION = "<conversation>\n{{conversation}}\n</conversation>"

P.arguments = {
  system = [[You check the arguments an AI agent passed to the tools it called. For each tool call, in the order given, decide whether its arguments are the right ones for what the user asked, given the conversation so far:
- verdict "yes": the arguments are correct and relevant to the user's request;
- verdict "no": an argument is wrong, invented, missing, or unrelated to the request (a call without arguments where the request needs some is "no").

Reply with JSON only, one entry per call, in order:
{"verdicts": [{"verdict": "yes", "reason": "one sentence"}]}]],
  user = CONVERSATION .. "\n<tool_calls>\n{{calls}}\n</tool_calls>",
}

P.task_outcome = {
  system = [[You read the record of an AI agent's work: what the user asked, what the agent said, the tools it called and what they returned. State the task the user wanted done, and the outcome the agent actually reached. The outcome must be factual, taken only from the record (what was said, called and returned), with no judgement of whether it is good.

Reply with JSON only: {"task": "the task in one sentence", "outcome": "the outcome in one or two sentences"}]],
  user = CONVERSATION,
}

P.task_verdict = {
  system = [[You compare the task a user wanted done with the outcome an AI agent reached. Give a score from 0 to 1: 1 when the outcome achieves the task completely, 0 when it does not achieve it at all, and a value in between for a partial achievement.

Reply with JSON only, the reason first: {"reason": "one or two sentences", "verdict": 0.5}]],
  user = "<task>\n{{task}}\n</task>\n<outcome>\n{{outcome}}\n</outcome>",
}

P.goal_state = {
  system = [[You read a conversation between a user and an AI agent, with the tools the agent called and what they returned. Identify the user's goal (what the user wants to achieve) and the end state (the final outcome the conversation reached).

Reply with JSON only: {"user_goal": "one sentence", "end_state": "one or two sentences"}]],
  user = CONVERSATION,
}

P.goal_compare = {
  system = [[You compare a desired outcome with the outcome an AI agent achieved. Verdict 1 when the achieved outcome is the desired one (details the desired outcome leaves open may differ), 0 when it is not.

Reply with JSON only, the reason first: {"reason": "one sentence", "verdict": 1}]],
  user = "<desired_outcome>\n{{desired}}\n</desired_outcome>\n<achieved_outcome>\n{{achieved}}\n</achieved_outcome>",
}

P.topics = {
  system = [[You read a conversation between a user and an AI assistant and list the topics the user raised, one short phrase each, in the order they came up.

Reply with JSON only: {"topics": ["first topic", "second topic"]}]],
  user = CONVERSATION,
}

P.topic_verdicts = {
  system = [[You are given a conversation, a list of topics the user raised in it, and the reference topics the assistant is meant to cover. For each topic, in the order given, decide:
- "answered": true when the assistant answered about the topic, false when it refused or did not answer;
- "on_topic": true when the topic falls under one of the reference topics, false when it does not.

Reply with JSON only, one entry per topic:
{"verdicts": [{"topic": "the topic", "answered": true, "on_topic": true}]}]],
  user = CONVERSATION .. "\n<reference_topics>\n{{reference_topics}}\n</reference_topics>\n<topics>\n{{topics}}\n</topics>",
}

P.knowledge = {
  system = [[You extract the facts a user states about themselves or their request in one message (names, numbers, dates, preferences, identifiers), so they can be checked later. Use the earlier messages only to understand the new one. Facts the message does not state are left out.

Reply with JSON only, an object of short keys and values: {"facts": {"order number": "A17"}}; {"facts": {}} when it states none.]],
  user = "<previous_messages>\n{{previous}}\n</previous_messages>\n<message>\n{{message}}\n</message>",
}

P.retention = {
  system = [[You check whether an AI assistant's message forgets what the user already said. Given the facts the user stated earlier and the assistant's message, verdict "yes" when the message asks again for something already given, contradicts it, or acts as if it had not been said; verdict "no" when it keeps to what the user said (or does not touch it).

Reply with JSON only, the reason first: {"reason": "one sentence", "verdict": "no"}]],
  user = "<facts>\n{{facts}}\n</facts>\n<message>\n{{message}}\n</message>",
}

P.role = {
  system = [[You check whether an AI assistant stays in its role throughout a conversation. The role is described below. List every assistant message that breaks the role (says or does something the role would not), by its number in brackets.

Reply with JSON only: {"out_of_character": [{"index": 3, "reason": "one sentence"}]}, or {"out_of_character": []} when every assistant message keeps to the role.]],
  user = "<role>\n{{role}}\n</role>\n" .. CONVERSATION,
}

P.intentions = {
  system = [[You list what a user wanted from a conversation with an AI assistant: each intention, in a short sentence, in the order the user expressed it. Only the user's messages count.

Reply with JSON only: {"intentions": ["the user wants ..."]}]],
  user = CONVERSATION,
}

P.intention_verdicts = {
  system = [[For each intention of the user, in the order given, decide whether the AI assistant satisfied it in the conversation: verdict "yes" when it did, "no" when it did not.

Reply with JSON only, one entry per intention:
{"verdicts": [{"verdict": "yes", "reason": "one sentence"}]}]],
  user = CONVERSATION .. "\n<intentions>\n{{intentions}}\n</intentions>",
}

P.turn_relevancy = {
  system = [[You read the last messages of a conversation between a user and an AI assistant. Decide whether the LAST assistant message is relevant to what the user said, given the earlier messages: verdict "yes" when it is, "no" when it is off topic or ignores the user.

Reply with JSON only, the reason first: {"reason": "one sentence", "verdict": "yes"}]],
  user = CONVERSATION,
}

return P
