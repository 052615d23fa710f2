#!/usr/bin/env python3
"""An OpenAI-compatible HTTP/1.1 server for evalua's judge tests and benchmark.

It serves POST /v1/chat/completions and /v1/embeddings (and /grade/..., a
webhook assertion's grader answering the directive's "answer") on 127.0.0.1 (a free
port chosen at start, written to --port-file), with keep-alive. Faults are
scripted per request by a directive in the request's text:

    <<mock {"faults": ["429", "500"], "retry_after": "1", "answer": "ok"}>>

The directive's JSON may hold:
  faults       list applied to attempts 1, 2, ... of the same request (same
               body, or same "id"): "429", "500", "502", "503", "timeout" (never
               answers), "drop" (closes without answering), "truncate" (half the
               body, then closes), "malformed" (200 with a body that is not
               JSON), "400", "401", "403", "404", "quota" (429 insufficient_quota);
               later attempts get the normal answer
  retry_after  Retry-After value sent with a 429 (string, seconds)
  retry_after_date  seconds from now, sent with a 429 as an HTTP date
  retry_after_ms  retry-after-ms value sent with a 429 (OpenAI's and Azure's
               header, milliseconds; lets a test wait less than a second)
  message      error message for an error status ("{auth}" becomes the
               Authorization header the server received, as some servers echo it)
  error_shape  "string" ({"error": msg}), "detail" ({"detail": msg}, FastAPI,
               vLLM) or "html" (Express); default OpenAI's {"error": {"message"}}
  escape       the reply (where "{auth}" is the Authorization header) sent
               with every character \\u-escaped
  auth_utf8    "{auth}" is the Authorization header's bytes read as UTF-8
               (default: as Latin-1, as HTTP servers read headers)
  echo         how a reply holding "{auth}" echoes it: "nested" (the reply is
               {"reason": "{auth}"} with the header \\u-escaped inside that
               JSON, so the answer holds it escaped twice), "split" (the
               reply streamed as server-sent events though not asked, the
               header cut in two chunks)
  answer       the assistant's reply text, verbatim
  steps        the answers of a model given tools, by step (agent_message)
  answer_bytes a reply of this many bytes
  answers      replies for attempts 1, 2, ... (the last one repeats); give an
               "id" when the requests differ (a repair request, say)
  logprobs     the logprobs content to return verbatim (a list of {token,
               logprob, top_logprobs}) when the request asks for logprobs
  refusal      a structured refusal: content null, this text as "refusal"
  latency_ms   latency of this request (overrides --latency-ms)
  usage        {"prompt_tokens": n, "completion_tokens": n} to report
  id           groups attempts of requests whose bodies differ
  embed_dim    the length of this input's embedding (default 8)
  http_answer  the reply of POST /generate (default: answer)

POST /generate... is a service of one's own, as an http provider calls one:
the directive may be in any string of its JSON body, and the reply is
{"result": {"text": ...}}: http_answer, else answer, else "echo: " and the
body's strings.

Without "answer", chat replies are heuristic: a request whose
X-Evalua-Operation header names a judge operation (the judge sends it) gets a
valid answer of that operation's shape, computed by token overlap from the
<question>, <answer>, <context>, <statements>, <passage>, <text>,
<reference> ... sections of the user message (OPERATIONS below); otherwise
a short text, or {"answer": ...} when JSON was asked. Logprobs split the
reply into words, digits and punctuation marks, each with the spaces before
it. A request's max_tokens is honoured as a server does: a longer reply is
cut after that many of those pieces, with finish_reason "length".
Usage counts whitespace-separated words (CJK characters count one each).

Server behaviours of other OpenAI-compatible servers, set by POST
/_mock/config (or --config JSON at start; /_mock/reset keeps them):
  latency_ms       default latency
  fault_rate       share of attempts answered 429 (Retry-After: 1) or 500,
                   half each, drawn from a generator seeded by "seed"
  fault_by         "arrival" (default): each attempt draws from that one
                   generator in the order attempts arrive, so the faults a
                   request meets depend on the client's timing; "request":
                   each request (its body) has its own fault plan drawn
                   from "seed" and the body's SHA-256, attempt n gets the
                   plan's n-th fault and succeeds past its end, so every
                   client meets the same faults (GET /_mock/faults)
  no_usage         no usage, system_fingerprint or choice index (llama.cpp,
                   small mocks)
  idle_close_ms    close a keep-alive connection idle this long (vLLM's
                   uvicorn closes after 5 s)
  max_request_bytes  413 for a larger request body (proxies: 100 kB)
  sse              answer with server-sent events when the request sets
                   "stream" (as every server does)
  quota            {"requests": n, "tokens": n, "window_s": s}: a fixed-window
                   quota sent in x-ratelimit-* headers; 429 when exceeded
  wrap             "prose" or "fence": JSON answers inside prose or a fence
  fail_status      answer every /v1 request with this HTTP status (a dead
                   judge: 500, 404 ...), with "retry_after" as Retry-After
  refuse_logprobs  answer a request asking for logprobs 400, as servers
                   without logprobs support do
  send_log         a file to which each answer's send time (Unix seconds) and
                   the SHA-256 of its request body are appended as it is
                   sent, one "time<TAB>hash" line each (bench/judge/kill.py)

Control endpoints (not counted as requests): GET /_mock/stats (requests,
in_flight, peak_in_flight, by_path, status counts), GET /_mock/requests
(every request seen: path, headers, body, arrival time), GET /_mock/faults
(the fault_rate draws: "sequence", the fault or null of each attempt in
arrival order under fault_by "arrival"; under "request", "plans", [fault, ...]
per request seen, and "forced", the attempts those plans force, one per fault
plus one), POST /_mock/reset,
POST /_mock/config (the behaviours above; {} restores the defaults except
latency).

    mock_openai.py --port-file FILE [--latency-ms N] [--watch-pid PID]
    mock_openai.py --get URL | --post URL [--data JSON]   a client for test scripts
"""
import argparse
import asyncio
import email.utils
import hashlib
import json
import math
import os
import random
import re
import sys
import time
import urllib.request

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
           404: "Not Found", 413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable"}
DIRECTIVE = re.compile(r"<<mock (\{.*?\})>>", re.S)
TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+")
STOP = set("a an the of to in on at by for with and or is are was were be been it its this that as "
           "from do does did what which who how when where why 的 了 是 在 和".split())


class State:
    def __init__(self, latency_ms, record):
        self.latency_ms = latency_ms
        self.record = record
        self.configure({})
        self.reset()

    def configure(self, cfg):
        self.cfg = cfg
        self.send_log = getattr(self, "send_log", None)
        self.rng = random.Random(cfg.get("seed", 1))
        self.window = None  # (start, requests, tokens) of the quota window

    def reset(self):
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.by_path = {}
        self.seen = []
        self.attempts = {}
        self.plans = {}
        self.draws = []
        self.statuses = {}


def tokens(text):
    return [t.lower() for t in TOKEN.findall(text or "")]


def content_words(text):
    toks = [t for t in tokens(text) if t not in STOP]
    return toks or tokens(text)


def count_tokens(text):
    return len(tokens(text))


def section(text, tag):
    m = re.search(r"<%s>\n?(.*?)\n?</%s>" % (tag, tag), text or "", re.S)
    return m.group(1) if m else ""


def sentences(text):
    parts = re.split(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f\uff1b])|\n+", text or "")
    return [p.strip() for p in parts if p.strip() and tokens(p)]


def overlap(words, text):
    """Share of words (content tokens) found among text's tokens."""
    have = set(tokens(text))
    return sum(1 for w in words if w in have) / len(words) if words else 0.0


def relevance(question, text):
    q = set(content_words(question))
    t = set(tokens(text))
    return (len(q & t) / len(q) if q else 0.0), len(q & t), len(q)


def f1(a, b):
    ta, tb = content_words(a), content_words(b)
    common = sum(min(ta.count(w), tb.count(w)) for w in set(ta))
    if not common:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def checked(statement, context):
    share = overlap(content_words(statement), context)
    return {"statement": statement, "verdict": 1 if share >= 0.5 else 0,
            "reason": "%d%% of its words are in the context" % round(share * 100)}


def labelled(user):
    """The "Label:\nvalue" blocks of a G-Eval style test case."""
    return dict(re.findall(r"^([A-Z][A-Za-z ]+):\n(.*?)(?=\n\n|\Z)", user, re.S | re.M))


def score_answer(op, system, user):
    """A whole-number score by token overlap: geval_strict 0-1, rag_correctness
    1-5, geval_score the range its system prompt states (the scale is a
    parameter of the request, not of the operation)."""
    m = re.search(r"(\d+) to (\d+)", system)
    lo, hi = {"geval_strict": (0, 1), "rag_correctness": (1, 5)}.get(op) or (
        (int(m.group(1)), int(m.group(2))) if m else (1, 5))
    blocks = labelled(user)
    answer = section(user, "answer") or blocks.get("Actual Output", "")
    other = (section(user, "reference") or blocks.get("Expected Output") or blocks.get("Context")
             or blocks.get("Input") or section(user, "question"))
    if not answer and "Turns" in blocks:  # a conversation: its last reply against the expected outcome
        lines = transcript_lines(user, blocks["Turns"])
        replies_ = [t for _, r, t in lines if r == "assistant"]
        asked = [t for _, r, t in lines if r == "user"]
        answer = replies_[-1] if replies_ else ""
        other = blocks.get("Expected Outcome") or (asked[0] if asked else "")
    score = lo + round(f1(answer, other) * (hi - lo))
    return {"reason": "overlap with the reference", "score": score}


def checked_list(system, user):
    ctx = section(user, "context") or section(user, "passage")
    return {"verdicts": [checked(s, ctx) for s in json.loads(section(user, "statements") or "[]")]}


def graded_list(system, user):
    ctx = section(user, "context") or section(user, "passage")
    out = []
    for s in json.loads(section(user, "statements") or "[]"):
        share = overlap(content_words(s), ctx)
        out.append({"statement": s, "grade": 2 if share >= 0.5 else 1 if share >= 0.25 else 0,
                    "reason": "%d%% of its words are in the context" % round(share * 100)})
    return {"verdicts": out}


def relevant_sentences(system, user):
    question = section(user, "question")
    out = []
    for s in sentences(section(user, "passage") or section(user, "context")):
        share = relevance(question, s)[0]
        out.append({"statement": s, "verdict": 1 if share >= 1 / 3 else 0, "reason": "question overlap"})
    return {"verdicts": out}


def statements(system, user):
    return {"statements": sentences(section(user, "answer"))}


def questions(system, user):
    m = re.search(r"(\d+)", system)  # how many: a parameter of the request
    answer = section(user, "answer")
    dodge = 1 if re.search(r"(?i)(don't know|do not know|cannot|not sure|no idea)", answer) else 0
    words = " ".join(answer.split()[:12])
    return {"questions": [{"question": "Question %d about: %s?" % (i + 1, words), "noncommittal": dodge}
                          for i in range(int(m.group(1)) if m else 3)]}


def relevance_answer(system, user):
    question = section(user, "question")
    score, found, total = relevance(question, section(user, "text") or section(user, "answer"))
    return {"relevance": round(score, 4), "reason": "%d of %d question words" % (found, total)}


def in_passage(user):
    claim = section(user, "expected_answer") or section(user, "response") or section(user, "reference")
    return overlap(content_words(claim), section(user, "passage") or section(user, "context")) >= 0.5


def verdict_01(system, user):
    return {"reason": "overlap with the passage", "verdict": int(in_passage(user))}


def verdict_yes_no(system, user):
    return {"reason": "overlap with the passage", "verdict": "YES" if in_passage(user) else "NO"}


def better(system, user):
    ref = section(user, "reference") or section(user, "question")
    fa, fb = f1(section(user, "answer_A"), ref), f1(section(user, "answer_B"), ref)
    return {"reason": "overlap with the reference", "better": "A" if fa > fb else "B" if fb > fa else "tie"}


def steps(system, user):
    return {"steps": ["Read the case.", "Compare the actual output with the criterion.",
                      "Decide how far the criterion is met."]}


def declared_keys(system, user):
    m = re.search(r'(\["[^"]*"(?:,\s*"[^"]*")*\])', user)  # the declared output keys, a JSON list
    keys = json.loads(m.group(1)) if m else []
    return {k: (1 if k in ("score", "verdict", "passing") else "mock") for k in keys}


# ---- the agent metrics' operations (lua/evalua/agent/*): heuristics over the
# <conversation> transcript, whose lines are "[n] user: ...", "[n] assistant:
# ...", "[n] assistant calls NAME {args}" and "[n] tool NAME: ...".

TURN = re.compile(r"^\[(\d+)\] (user|assistant calls|assistant|system|developer|tool [^:]*):? ?(.*)$")


def transcript_lines(user, text=None):
    """[(n, role, text)] of the <conversation> section (or of text)."""
    out = []
    for line in (section(user, "conversation") if text is None else text).split("\n"):
        m = TURN.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2), m.group(3)))
        elif out:
            n, role, text = out[-1]
            out[-1] = (n, role, text + "\n" + line)
    return out


def said(user, role):
    return [text for _, r, text in transcript_lines(user) if r == role]


def arg_words(value):
    if isinstance(value, dict):
        return [w for v in value.values() for w in arg_words(v)]
    if isinstance(value, list):
        return [w for v in value for w in arg_words(v)]
    return tokens(str(value)) if not isinstance(value, bool) else []


def agent_arguments(system, user):
    """yes when every word of a call's argument values was said by the user."""
    heard = set(tokens(" ".join(said(user, "user"))))
    out = []
    for call in json.loads(section(user, "tool_calls") or "[]"):
        words = arg_words(call.get("arguments"))
        ok = all(w in heard for w in words)
        out.append({"verdict": "yes" if ok else "no", "reason": "argument words %s the user's" % ("are" if ok else "are not all")})
    return {"verdicts": out}


def first_last(user):
    users, answers = said(user, "user"), said(user, "assistant")
    return (users[0] if users else ""), (answers[-1] if answers else "")


def agent_task_outcome(system, user):
    task, outcome = first_last(user)
    return {"task": task or "none", "outcome": outcome or "none"}


def agent_goal_state(system, user):
    goal, end = first_last(user)
    return {"user_goal": goal or "none", "end_state": end or "none"}


def agent_task_verdict(system, user):
    share = overlap(content_words(section(user, "task")), section(user, "outcome"))
    return {"reason": "overlap of the task with the outcome", "verdict": round(share, 2)}


def agent_goal_compare(system, user):
    share = overlap(content_words(section(user, "desired_outcome")), section(user, "achieved_outcome"))
    return {"reason": "overlap with the desired outcome", "verdict": 1 if share >= 0.5 else 0}


REFUSED = re.compile(r"(?i)\b(cannot|can't|sorry|unable)\b|抱歉|无法")


def replies(user):
    """(user text, the turn's last assistant text) per user message."""
    out, lines = [], transcript_lines(user)
    for i, (_, role, text) in enumerate(lines):
        if role != "user":
            continue
        reply = ""
        for _, r, t in lines[i + 1:]:
            if r == "user":
                break
            if r == "assistant":
                reply = t
        out.append((text, reply))
    return out


def agent_topics(system, user):
    return {"topics": [u for u, _ in replies(user)]}


def agent_topic_verdicts(system, user):
    refs = set(w for t in json.loads(section(user, "reference_topics") or "[]") for w in content_words(t))
    answer = dict(replies(user))
    out = []
    for topic in json.loads(section(user, "topics") or "[]"):
        reply = answer.get(topic, "")
        out.append({"topic": topic, "answered": bool(reply) and not REFUSED.search(reply),
                    "on_topic": any(w in refs for w in content_words(topic))})
    return {"verdicts": out}


def agent_knowledge(system, user):
    ids = [t for t in re.findall(r"[A-Za-z]*\d[\w-]*", section(user, "message"))]
    return {"facts": {"fact %d" % (i + 1): v for i, v in enumerate(ids)}}


def agent_retention(system, user):
    facts = [f.split(": ", 1)[-1].lower() for f in section(user, "facts").split("\n") if f.strip()]
    message = section(user, "message")
    forgot = "?" in message and not any(f in message.lower() for f in facts)
    return {"reason": "asks without the user's facts" if forgot else "keeps the facts", "verdict": "yes" if forgot else "no"}


def agent_role(system, user):
    return {"out_of_character": [{"index": n, "reason": "speaks as a model"} for n, r, t in transcript_lines(user)
                                 if r == "assistant" and re.search(r"(?i)as an ai|language model", t)]}


def agent_intentions(system, user):
    return {"intentions": said(user, "user")}


def agent_intention_verdicts(system, user):
    answers = " ".join(said(user, "assistant"))
    return {"verdicts": [{"verdict": "yes" if overlap(content_words(i), answers) >= 0.5 else "no", "reason": "overlap"}
                         for i in json.loads(section(user, "intentions") or "[]")]}


def agent_turn_relevancy(system, user):
    users, answers = said(user, "user"), said(user, "assistant")
    ok = bool(users and answers) and bool(set(content_words(users[-1])) & set(tokens(answers[-1])))
    return {"reason": "shares words with the user" if ok else "shares no word with the user", "verdict": "yes" if ok else "no"}


AGENT_OPERATIONS = {
    "agent_arguments": agent_arguments, "agent_task_outcome": agent_task_outcome,
    "agent_task_verdict": agent_task_verdict, "agent_goal_state": agent_goal_state,
    "agent_goal_compare": agent_goal_compare, "agent_topics": agent_topics,
    "agent_topic_verdicts": agent_topic_verdicts, "agent_knowledge": agent_knowledge,
    "agent_retention": agent_retention, "agent_role": agent_role, "agent_intentions": agent_intentions,
    "agent_intention_verdicts": agent_intention_verdicts, "agent_turn_relevancy": agent_turn_relevancy,
}


# The answer of each judge operation, chosen by the X-Evalua-Operation header
# the judge sends (never by the prompt's wording, which users edit).
OPERATIONS = {
    "statements": statements, "rag_statements": statements,
    "verdicts": checked_list, "rag_verdicts": checked_list, "rag_recall": checked_list,
    "rag_graded": graded_list,
    "rag_context_relevance": relevant_sentences,
    "relevance": relevance_answer, "rag_answer_relevance": relevance_answer,
    "rag_questions": questions,
    "rag_precision": verdict_01,
    "rag_relevancy": verdict_yes_no, "rag_relevancy_refine": verdict_yes_no,
    "rag_pairwise": better,
    "geval_steps": steps,
    "geval_score": lambda system, user: score_answer("geval_score", system, user),
    "geval_strict": lambda system, user: score_answer("geval_strict", system, user),
    "rag_correctness": lambda system, user: score_answer("rag_correctness", system, user),
    "llm_evaluator": declared_keys,
}
OPERATIONS.update(AGENT_OPERATIONS)


def op_answer(op, system, user):
    """A JSON answer in the shape operation op asks for, by token overlap;
    None for a request without a known operation."""
    fn = OPERATIONS.get(op or "")
    return fn(system, user) if fn else None


def chat_answer(req, directive, op):
    msgs = req.get("messages") or []
    system = " ".join(str(m.get("content", "")) for m in msgs if m.get("role") == "system")
    user = str(msgs[-1].get("content", "")) if msgs else ""
    if "answer_bytes" in directive:  # a huge reply
        return "y" * int(directive["answer_bytes"])
    if "answer" in directive:
        return directive["answer"]
    out = op_answer(op, system, user)
    if out is not None:
        return json.dumps(out, ensure_ascii=False)
    text = "mock answer: " + " ".join(DIRECTIVE.sub("", user).split()[:8])
    if (req.get("response_format") or {}).get("type") == "json_object":
        return json.dumps({"answer": text})
    return text


PIECE = re.compile(r"\s*(?:\d|\w+|[^\w\s]+)|\s+")


def logprobs_for(text, top):
    """Word, number and punctuation tokens; a digit's alternatives are its
    neighbours, so a probability-weighted score can be computed."""
    out = []
    for i, tok in enumerate(PIECE.findall(text)):
        lp = -0.01 * (i + 1)
        word = tok.lstrip()
        if word.isdigit():
            lead = tok[: len(tok) - len(word)]
            alts = [(tok, lp)] + [(lead + str(int(word) + d), lp - 2.0 * k)
                                  for k, d in ((1, 1), (2, -1), (3, 2)) if 0 <= int(word) + d <= 9]
        else:
            alts = [(tok, lp)] + [("%s_%d" % (tok, k), lp - 2.0 * k) for k in range(1, top)]
        out.append({"token": tok, "logprob": lp,
                    "top_logprobs": [{"token": t, "logprob": l} for t, l in alts[:top]]})
    return {"content": out}


def agent_policy(req):
    """A model given tools, without a script: after tool answers it replies with
    them; otherwise it calls the tool whose name shares a word with the user's
    last message (else the first tool), filling each required argument: an
    integer or number 1, a boolean true, a string the first word of the
    message holding a digit (else the whole message)."""
    msgs, tools = req.get("messages") or [], req.get("tools") or []
    if msgs and msgs[-1].get("role") == "tool":
        outs = []
        for m in reversed(msgs):
            if m.get("role") != "tool":
                break
            outs.insert(0, str(m.get("content")))
        return {"content": "mock answer from the tools: " + " | ".join(outs)}
    user = next((str(m.get("content")) for m in reversed(msgs) if m.get("role") == "user"), "")
    user = DIRECTIVE.sub("", user).strip()
    words = set(tokens(user))
    pick = next((t for t in tools if set(t["function"]["name"].lower().split("_")) & words), tools[0])
    params = pick["function"].get("parameters") or {}
    ident = next((w for w in user.split() if re.search(r"\d", w)), user).strip("?.,!")
    args = {}
    for name in params.get("required") or []:
        kind = ((params.get("properties") or {}).get(name) or {}).get("type")
        args[name] = 1 if kind in ("integer", "number") else True if kind == "boolean" else ident
    return {"tool_calls": [{"name": pick["function"]["name"], "arguments": args}]}


def agent_message(req, directive):
    """(message, finish_reason) of a request that offers tools. A directive
    {"steps": [...]} scripts the answers: step k (k = the assistant messages
    already in the request + 1; the last step repeats) is {"content": text}
    or {"tool_calls": [{"name":, "arguments": object or raw text, "id":}]}."""
    msgs = req.get("messages") or []
    step = sum(1 for m in msgs if m.get("role") == "assistant") + 1
    steps = directive.get("steps")
    s = steps[min(step, len(steps)) - 1] if steps else agent_policy(req)
    if s.get("tool_calls"):
        calls = []
        for k, c in enumerate(s["tool_calls"]):
            args = c.get("arguments", {})
            calls.append({"id": c.get("id", "call_%d_%d" % (step, k + 1)), "type": "function",
                          "function": {"name": c.get("name", ""),
                                       "arguments": args if isinstance(args, str) else json.dumps(args)}})
        return {"role": "assistant", "content": s.get("content"), "tool_calls": calls}, "tool_calls"
    return {"role": "assistant", "content": s.get("content", "")}, "stop"


def agent_response(req, directive):
    msg, finish = agent_message(req, directive)
    prompt = sum(count_tokens(str(m.get("content") or "")) for m in req.get("messages") or [])
    done = count_tokens(msg.get("content") or "") + sum(count_tokens(c["function"]["arguments"])
                                                         for c in msg.get("tool_calls") or [])
    return {"id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model") or "mock-model", "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}}


def chat_response(req, directive, cfg, op):
    if req.get("tools") and not op:  # a model with tools: ev.generate's agent loop
        return agent_response(req, directive)
    text = chat_answer(req, directive, op)
    if cfg.get("wrap") and (req.get("response_format") or {}).get("type") == "json_object":
        text = ("Here is my assessment:\n```json\n%s\n```\nI hope this helps." if cfg["wrap"] == "fence"
                else "Sure. My answer is %s as requested.") % text
    finish = "stop"
    pieces = PIECE.findall(text)
    if isinstance(req.get("max_tokens"), int) and len(pieces) > req["max_tokens"]:
        text, finish = "".join(pieces[:req["max_tokens"]]), "length"  # cut as a server cuts
    prompt = sum(count_tokens(str(m.get("content", ""))) for m in req.get("messages") or [])
    usage = {"prompt_tokens": prompt, "completion_tokens": count_tokens(text)}
    usage.update(directive.get("usage") or {})
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
    if "refusal" in directive:  # OpenAI's structured refusal
        choice["message"] = {"role": "assistant", "content": None, "refusal": directive["refusal"]}
    if req.get("logprobs"):
        choice["logprobs"] = ({"content": directive["logprobs"]} if "logprobs" in directive
                              else logprobs_for(text, int(req.get("top_logprobs") or 1)))
    out = {"id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()),
           "model": req.get("model") or "mock-model", "system_fingerprint": "fp_mock",
           "choices": [choice], "usage": usage}
    if cfg.get("no_usage"):
        del out["usage"], out["system_fingerprint"], choice["index"]
    return out


def go_duration(seconds):
    """A duration as OpenAI writes x-ratelimit-reset-*: "20ms", "1.5s", "6m0s"."""
    ms = math.ceil(seconds * 1000)
    if ms < 1000:
        return "%dms" % ms
    if ms < 60000:
        return "%gs" % (ms / 1000.0)
    return "%dm%gs" % (ms // 60000, (ms % 60000) / 1000.0)


def sse_body(out, cut=None):
    """A chat answer as server-sent events: one chunk per word (or the text
    cut in two at offset cut), then [DONE]."""
    text = out["choices"][0]["message"]["content"]
    events = []
    for piece in ([text[:cut], text[cut:]] if cut is not None else re.findall(r"\S+\s*|\s+", text)):
        events.append({"id": out["id"], "object": "chat.completion.chunk", "model": out["model"],
                       "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    events.append({"id": out["id"], "object": "chat.completion.chunk", "model": out["model"],
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return "".join("data: %s\n\n" % json.dumps(e, ensure_ascii=False) for e in events).encode() + b"data: [DONE]\n\n"


def embedding(text, dim=8):
    v = [0.0] * dim
    for t in tokens(text):
        h = hashlib.sha256(t.encode()).digest()
        v[h[0] % dim] += 1.0 if h[1] & 1 else -1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [round(x / n, 6) for x in v]


def embed_response(req):
    inputs = req.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    def dim(s):  # an input may ask for its own length: <<mock {"embed_dim": 4}>>
        m = DIRECTIVE.search(s)
        return int(json.loads(m.group(1)).get("embed_dim", 8)) if m else 8
    data = [{"object": "embedding", "index": i, "embedding": embedding(s, dim(s))} for i, s in enumerate(inputs)]
    n = sum(count_tokens(s) for s in inputs)
    return {"object": "list", "data": data, "model": req.get("model") or "mock-embed",
            "usage": {"prompt_tokens": n, "total_tokens": n}}


def strings_of(v):
    """Every string inside a JSON value (a service's own request body); a
    string holding JSON (a chat prompt sent whole) is searched inside first."""
    if isinstance(v, str):
        try:
            inner = json.loads(v)
        except ValueError:
            return [v]
        return (strings_of(inner) if isinstance(inner, (list, dict)) else []) + [v]
    if isinstance(v, dict):
        v = list(v.values())
    return [s for x in v for s in strings_of(x)] if isinstance(v, list) else []


def find_directive(req, body):
    if b"<<mock" not in body:
        return {}
    texts = [str(m.get("content", "")) for m in req.get("messages") or []]
    inp = req.get("input")
    texts += [inp] if isinstance(inp, str) else [str(s) for s in inp or []]
    if "messages" not in req and "input" not in req:  # /generate: anywhere in the body
        texts = strings_of(req)
    if isinstance(req.get("output"), str):  # a webhook assertion's body
        texts.append(req["output"])
    for t in texts:
        m = DIRECTIVE.search(t)
        if m:
            return json.loads(m.group(1))
    return {}


def u_escaped(text):
    """Every character of text as a JSON \\u escape (a surrogate pair past U+FFFF)."""
    out = []
    for c in text:
        n = ord(c)
        out.append("\\u%04x" % n if n < 0x10000 else "\\u%04x\\u%04x" % (0xD800 + ((n - 0x10000) >> 10),
                                                                        0xDC00 + ((n - 0x10000) & 0x3FF)))
    return "".join(out)


def auth_echo(headers, directive):
    """The Authorization header as a server echoes it: its bytes read as
    Latin-1 (as received), or as UTF-8 with "auth_utf8"."""
    auth = headers.get("authorization", "")
    return auth.encode("latin-1").decode("utf-8", "replace") if directive.get("auth_utf8") else auth


def error_body(message, etype, code=None):
    return json.dumps({"error": {"message": message, "type": etype, "code": code}}).encode()


def response(status, body, extra=(), ctype="application/json"):
    head = "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (
        status, REASONS.get(status, "Status"), ctype, len(body))
    head += "".join("%s: %s\r\n" % kv for kv in extra) + "\r\n"
    return head.encode("latin-1") + body


class Server:
    """Decides every answer; Conn objects only move bytes."""

    def __init__(self, state):
        self.s = state
        self.loop = asyncio.get_running_loop()

    def control(self, method, path, body):
        s = self.s
        if path == "/_mock/stats":
            out = {"requests": s.requests, "in_flight": s.in_flight, "peak_in_flight": s.peak,
                   "by_path": s.by_path, "statuses": s.statuses}
        elif path == "/_mock/requests":
            out = {"requests": s.seen}
        elif path == "/_mock/faults":
            plans = list(s.plans.values())
            out = {"sequence": s.draws, "plans": plans, "forced": sum(len(p) + 1 for p in plans)}
        elif path == "/_mock/reset" and method == "POST":
            s.reset()
            out = {"ok": True}
        elif path == "/_mock/config" and method == "POST":
            cfg = json.loads(body or b"{}")
            if "latency_ms" in cfg:
                s.latency_ms = float(cfg.pop("latency_ms"))
            s.configure(cfg)
            out = {"ok": True, "latency_ms": s.latency_ms}
        else:
            return response(404, error_body("no control endpoint " + path, "invalid_request_error"))
        return response(200, json.dumps(out).encode())

    def log_send(self, body):
        """Appends the send time and the request body's hash to send_log."""
        path = self.s.cfg.get("send_log")
        if not path:
            return
        if self.s.send_log is None or self.s.send_log.name != path:
            self.s.send_log = open(path, "a", buffering=1)
        self.s.send_log.write("%.6f\t%s\n" % (time.time(), hashlib.sha256(body).hexdigest()))

    def drawn_fault(self, cfg, body):
        """The fault_rate fault of this attempt ("429", "500"), or None."""
        if cfg.get("fault_by", "arrival") == "arrival":
            fault = self.s.rng.choice(["429", "500"]) if self.s.rng.random() < cfg["fault_rate"] else None
            self.s.draws.append(fault)
            return fault
        key = hashlib.sha256(body).hexdigest()
        plan = self.s.plans.get(key)
        if plan is None:  # drawn whole on first sight: the same whatever the timing
            rng, plan = random.Random("%s:%s" % (cfg.get("seed", 1), key)), []
            while len(plan) < 100 and rng.random() < cfg["fault_rate"]:
                plan.append(rng.choice(["429", "500"]))
            self.s.plans[key] = plan
        n = self.s.attempts.get("plan:" + key, 0) + 1
        self.s.attempts["plan:" + key] = n
        return plan[n - 1] if n <= len(plan) else None

    def attempt_of(self, directive, body):
        key = directive.get("id") or hashlib.sha256(body).hexdigest()
        n = self.s.attempts.get(key, 0) + 1
        self.s.attempts[key] = n
        return n

    def record(self, path, headers, body):
        s = self.s
        s.requests += 1
        s.by_path[path] = s.by_path.get(path, 0) + 1
        s.in_flight += 1
        s.peak = max(s.peak, s.in_flight)
        if s.record:
            try:
                parsed = json.loads(body or b"null")
            except ValueError:
                parsed = body.decode("utf-8", "replace")
            s.seen.append({"path": path, "headers": headers, "body": parsed, "t": time.time()})

    def quota(self, req):
        """(fault or None, headers) of a fixed-window quota, as OpenAI reports it."""
        q = self.s.cfg.get("quota")
        if not q:
            return None, []
        now, span = time.time(), float(q.get("window_s", 60))
        if not self.s.window or now - self.s.window[0] >= span:
            self.s.window = [now - (now % span), 0, 0]
        w = self.s.window
        need = sum(count_tokens(str(m.get("content", ""))) for m in req.get("messages") or []) + 16
        over = w[1] + 1 > q.get("requests", 1e18) or w[2] + need > q.get("tokens", 1e18)
        if not over:
            w[1], w[2] = w[1] + 1, w[2] + need
        reset = go_duration(w[0] + span - now)
        extra = [("x-ratelimit-limit-requests", str(q.get("requests", 10 ** 9))),
                 ("x-ratelimit-remaining-requests", str(max(0, int(q.get("requests", 10 ** 9) - w[1])))),
                 ("x-ratelimit-reset-requests", reset),
                 ("x-ratelimit-limit-tokens", str(q.get("tokens", 10 ** 12))),
                 ("x-ratelimit-remaining-tokens", str(max(0, int(q.get("tokens", 10 ** 12) - w[2])))),
                 ("x-ratelimit-reset-tokens", reset)]
        return ("429" if over else None), extra

    def fault_answer(self, fault, directive, headers, extra=()):
        """(bytes, close) for an error fault."""
        extra = list(extra)
        if "retry_after" in directive:
            extra.append(("Retry-After", str(directive["retry_after"])))
        if "retry_after_date" in directive:
            when = time.time() + float(directive["retry_after_date"])
            extra.append(("Retry-After", email.utils.formatdate(when, usegmt=True)))
        if "retry_after_ms" in directive:
            extra.append(("retry-after-ms", str(directive["retry_after_ms"])))
        if fault == "quota":
            msg = directive.get("message", "You exceeded your current quota, please check your plan and billing details.")
            return response(429, error_body(msg, "insufficient_quota", "insufficient_quota"), extra)
        if fault == "429":
            msg = directive.get("message", "Rate limit reached for requests")
            return response(429, error_body(msg, "requests", "rate_limit_exceeded"), extra)
        msg = directive.get("message", "mock error %s" % fault).replace("{auth}", auth_echo(headers, directive))
        etype = "server_error" if fault[0] == "5" else "invalid_request_error"
        shape = directive.get("error_shape")  # how servers other than OpenAI say it
        if shape == "string":
            return response(int(fault), json.dumps({"error": msg}).encode())
        if shape == "detail":
            return response(int(fault), json.dumps({"detail": msg}).encode())
        if shape == "html":
            return response(int(fault), ("<!DOCTYPE html><html><body><pre>%s</pre></body></html>" % msg).encode(),
                            ctype="text/html")
        # Retry-After goes with a 429, and with other errors when asked (fail_status)
        return response(int(fault), error_body(msg, etype), extra if directive.get("error_headers") else ())

    def answer(self, path, headers, body):
        """(bytes or None, close, latency_s); None bytes with close=False: never answer."""
        data, close, latency = self.decide(path, headers, body)
        status = data[9:12].decode() if data else "none"
        self.s.statuses[status] = self.s.statuses.get(status, 0) + 1
        return data, close, latency

    def decide(self, path, headers, body):
        try:
            req = json.loads(body or b"{}")
            directive = find_directive(req, body)
        except ValueError as e:
            return response(400, error_body("request body is not JSON: %s" % e, "invalid_request_error")), False, 0
        latency = float(directive.get("latency_ms", self.s.latency_ms)) / 1000.0
        cfg = self.s.cfg
        if len(body) > cfg.get("max_request_bytes", float("inf")):
            return response(413, error_body("request body too large (%d bytes)" % len(body),
                                            "invalid_request_error")), False, latency
        fault, extra = self.quota(req)
        if fault:
            return self.fault_answer(fault, {"retry_after": "1"}, headers, extra), False, latency
        if cfg.get("fail_status") and path.startswith("/v1/"):  # a dead judge
            dead = {"error_headers": True}
            if "retry_after" in cfg:
                dead["retry_after"] = cfg["retry_after"]
            return self.fault_answer(str(cfg["fail_status"]), dead, headers), False, latency
        if cfg.get("refuse_logprobs") and req.get("logprobs"):
            return response(400, error_body("logprobs are not supported by this model", "invalid_request_error",
                                            "unsupported_parameter")), False, latency
        if cfg.get("fault_rate"):
            fault = self.drawn_fault(cfg, body)
            if fault:
                return self.fault_answer(fault, {"retry_after": "1"}, headers), False, latency
        faults = directive.get("faults") or []
        answers = directive.get("answers") or []
        if faults or answers:
            n = self.attempt_of(directive, body)
            if n <= len(faults):
                fault = str(faults[n - 1])
            if answers:
                directive["answer"] = answers[min(n, len(answers)) - 1]
        if fault == "timeout":
            return None, False, latency
        if fault == "drop":
            return None, True, latency
        if fault in ("429", "quota") or (fault and fault.isdigit()):
            return self.fault_answer(fault, directive, headers), False, latency
        if path.startswith("/hooks/"):  # a chat webhook (Slack, Mattermost) answers "ok"
            return response(200, b"ok", extra, "text/plain"), False, latency
        if path.startswith("/grade/"):  # a webhook assertion's grader: the directive's answer, as JSON
            return response(200, directive.get("answer", "{}").encode(), extra, "application/json"), False, latency
        if path.startswith("/generate"):  # a service of one's own, for http providers
            text = directive.get("http_answer", directive.get("answer", "echo: " + " ".join(strings_of(req))))
            out = json.dumps({"result": {"text": text}}, ensure_ascii=False).encode()
        elif path.endswith("/embeddings"):
            out = json.dumps(embed_response(req)).encode()
        elif path.endswith("/chat/completions"):
            answer = chat_response(req, directive, cfg, headers.get("x-evalua-operation"))
            msg = answer["choices"][0]["message"]
            auth, echo = auth_echo(headers, directive), msg["content"] is not None and directive.get("echo")
            if echo == "nested":
                msg["content"] = msg["content"].replace(
                    "{auth}", '{"reason": "%s"}' % u_escaped(auth))
            if echo == "split":  # the header cut in half, in two chunks
                cut = msg["content"].find("{auth}") + len(auth) // 2
                msg["content"] = msg["content"].replace("{auth}", auth)
                return response(200, sse_body(answer, cut), extra, "text/event-stream"), False, latency
            if req.get("stream") and cfg.get("sse"):
                return response(200, sse_body(answer), extra, "text/event-stream"), False, latency
            if msg["content"] is not None:
                msg["content"] = msg["content"].replace("{auth}", auth)
            out = json.dumps(answer, ensure_ascii=False).encode()
            if directive.get("escape"):  # the reply with every character \u-escaped, as some servers echo
                esc = u_escaped(msg["content"])
                out = out.replace(json.dumps(msg["content"], ensure_ascii=False)[1:-1].encode(), esc.encode())
        else:
            return response(404, error_body("unknown path " + path, "invalid_request_error")), False, latency
        if fault == "malformed":
            return response(200, b'{"id": "chatcmpl-mock", "choices": [{"message": oops'), False, latency
        if fault == "truncate":
            full = response(200, out)
            return full[: len(full) - len(out) // 2], True, latency
        return response(200, out, extra), False, latency


class Conn(asyncio.Protocol):
    """One keep-alive connection: parses requests, one at a time."""

    def __init__(self, server):
        self.srv = server
        self.buf = b""
        self.busy = False      # a request is being answered
        self.pending = False   # ... and counted in flight
        self.closed = False
        self.continued = False

    def connection_made(self, transport):
        self.t = transport
        self.idle = None
        self.wait_idle()

    def wait_idle(self):
        """Closes the connection when it stays idle idle_close_ms (a server's keep-alive timeout)."""
        ms = self.srv.s.cfg.get("idle_close_ms")
        if ms:
            self.idle = self.srv.loop.call_later(ms / 1000.0, self.idle_close)

    def idle_close(self):
        if not self.busy and not self.buf and not self.closed:
            self.closed = True
            self.t.close()

    def data_received(self, data):
        if self.idle:
            self.idle.cancel()
            self.idle = None
        self.buf += data
        self.process()

    def connection_lost(self, exc):
        self.closed = True
        self.release()

    def release(self):
        if self.pending:
            self.pending = False
            self.srv.s.in_flight -= 1

    def parse(self):
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        lines = self.buf[:end].decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for h in lines[1:]:
            k, _, v = h.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        if len(self.buf) < end + 4 + n:
            if headers.get("expect", "").lower() == "100-continue" and not self.continued:
                self.continued = True
                self.t.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return None
        body = self.buf[end + 4: end + 4 + n]
        self.buf = self.buf[end + 4 + n:]
        self.continued = False
        return method, path, headers, body

    def process(self):
        while not self.busy and not self.closed:
            try:
                got = self.parse()
            except ValueError:
                self.t.close()
                return
            if got is None:
                return
            method, path, headers, body = got
            close = headers.get("connection", "").lower() == "close"
            if path.startswith("/_mock/"):
                self.t.write(self.srv.control(method, path, body))
                continue
            self.busy = self.pending = True
            self.srv.record(path, headers, body)
            data, drop, latency = self.srv.answer(path, headers, body)
            if data is None and not drop:
                return  # a timeout: hold the request until the client leaves
            if latency > 0:
                self.srv.loop.call_later(latency, self.finish, data, drop or close, body)
            else:
                self.finish(data, drop or close, body)

    def finish(self, data, close, body=b""):
        if self.closed:
            return
        self.release()
        if data:
            self.t.write(data)
            self.srv.log_send(body)
        if close:
            self.closed = True
            self.t.close()
            return
        self.busy = False
        self.process()
        if not self.busy and not self.buf:
            self.wait_idle()


async def watch(pid, deadline):
    while time.time() < deadline:
        if pid:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        await asyncio.sleep(0.2)


async def main(args):
    state = State(args.latency_ms, not args.no_record)
    state.configure(json.loads(args.config))
    srv = Server(state)
    server = await asyncio.get_running_loop().create_server(
        lambda: Conn(srv), "127.0.0.1", args.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print(port, flush=True)
    async with server:
        await watch(args.watch_pid, time.time() + args.max_lifetime)


def fetch(url, data):
    with urllib.request.urlopen(url, data=None if data is None else data.encode()) as r:
        sys.stdout.write(r.read().decode())


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="OpenAI-compatible mock server for evalua tests")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--latency-ms", type=float, default=0.0)
    p.add_argument("--watch-pid", type=int, default=0, help="exit when this process is gone")
    p.add_argument("--max-lifetime", type=float, default=900.0, help="seconds before exiting anyway")
    p.add_argument("--no-record", action="store_true", help="keep counters only (benchmarks)")
    p.add_argument("--config", default="{}", help="server behaviours as JSON (see /_mock/config)")
    p.add_argument("--get", metavar="URL", help="print the body of a GET and exit")
    p.add_argument("--post", metavar="URL", help="POST --data (default {}) and print the answer")
    p.add_argument("--data", default="{}")
    a = p.parse_args()
    if a.get or a.post:
        fetch(a.get or a.post, None if a.get else a.data)
    else:
        try:
            asyncio.run(main(a))
        except KeyboardInterrupt:
            pass
