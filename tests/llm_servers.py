"""Test doubles for the synthetic-data tests.

- Loopback HTTP servers speaking the Gemini (``/v1beta|/v1/models/{model}:generateContent``) and
  OpenAI (``/v1/chat/completions``) protocols, driven by the real SDKs. They record every request
  (path, body, prompt, status, whether an answer was sent) and follow a per-request script:
  an HTTP error, a delay, a canned text, or hanging until released.
- ``FakeSandbox``: a scripted stand-in with the sandbox's ``run_many`` contract, for tests about
  generation that should not depend on compilers or bwrap. A fake program is one line,
  ``#fake {"out": "sum", "cpu": 0.01}``; ``out`` is sum | sum+1 | gen | empty, an optional
  ``verdict`` (e.g. COMPILE_ERROR) forces a failure.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


# ---------------------------------------------------------------------------- model answers

def fake_program(out: str = "sum", cpu: float = 0.01, verdict: str | None = None) -> str:
    spec: dict[str, Any] = {"out": out, "cpu": cpu}
    if verdict:
        spec["verdict"] = verdict
    return "#fake " + json.dumps(spec) + "\n"


def requested_language(prompt: str) -> str:
    m = re.search(r"^Language: (.+)$", prompt, re.M)
    return {"C++": "cpp", "Python": "python3"}.get(m.group(1).strip() if m else "", "cpp")


def pair_answer(prompt: str, *, fast: str | None = None, slow: str | None = None,
                inputs: list[str] | None = None, generator: str = "") -> str:
    """A well-formed model answer (JSON text) for ``prompt``, in the requested language."""
    return json.dumps({
        "problem": "Sum the integers of the input. " + prompt[-40:],
        "language": requested_language(prompt),
        "fast_solution": fast or fake_program("sum", 0.01),
        "slow_solution": slow or fake_program("sum", 0.05),
        "test_inputs": ["1 2 3\n", "10 20\n", "5\n"] if inputs is None else inputs,
        "input_generator": generator,
    })


# ---------------------------------------------------------------------------- servers

@dataclass
class Action:
    """What the server does with one request."""
    status: int = 200
    text: str | None = None          # model text; None: the responder's answer
    delay_s: float = 0.0             # sleep before answering (timeouts)
    hang: bool = False               # block until the server is released or closed
    retry_after: str | None = None
    raw_body: bytes | None = None    # send this body verbatim


@dataclass
class Recorded:
    path: str
    body: dict
    prompt: str
    status: int = 0
    answered: bool = False
    started: float = 0.0


class LLMServer:
    """Base class: a threaded HTTP server on 127.0.0.1 with a request script.

    ``script``: request number (0-based) -> Action, or a callable (number, Recorded) -> Action|None.
    ``responder``: prompt -> model text for plain successful answers.
    """

    def __init__(self, script: dict[int, Action] | Callable[[int, Recorded], Action | None] | None = None,
                 responder: Callable[[str], str] = pair_answer):
        self.script = script or {}
        self.responder = responder
        self.requests: list[Recorded] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self.release = threading.Event()
        self.hung = threading.Event()   # set when a request starts hanging
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    # protocol hooks
    def match(self, path: str) -> bool: raise NotImplementedError
    def prompt_of(self, body: dict) -> str: raise NotImplementedError
    def success(self, text: str, n: int, body: dict) -> dict: raise NotImplementedError
    def error(self, status: int) -> dict: raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def answered_bodies(self) -> list[str]:
        return [json.dumps(r.body, sort_keys=True) for r in self.requests if r.answered and r.status == 200]

    def _action(self, n: int, rec: Recorded) -> Action:
        if callable(self.script):
            return self.script(n, rec) or Action()
        return self.script.get(n, Action())

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?")[0]
                if not server.match(path):
                    return self._send(404, {"error": {"code": 404, "message": f"no route {path}"}})
                body = json.loads(raw or b"{}")
                rec = Recorded(path, body, server.prompt_of(body), started=time.monotonic())
                with server._lock:
                    n = len(server.requests)
                    server.requests.append(rec)
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    act = server._action(n, rec)
                    if act.hang:
                        server.hung.set()
                        server.release.wait()
                        return
                    if act.delay_s:
                        time.sleep(act.delay_s)
                    headers = {"Retry-After": act.retry_after} if act.retry_after else {}
                    if act.raw_body is not None:
                        self._send(act.status, act.raw_body, headers)
                    elif act.status != 200:
                        self._send(act.status, server.error(act.status), headers)
                    else:
                        text = act.text if act.text is not None else server.responder(rec.prompt)
                        self._send(200, server.success(text, n, body), headers)
                    rec.status, rec.answered = act.status, True
                except (BrokenPipeError, ConnectionResetError):
                    rec.status = -1  # the client gave up (timeout): no answer was delivered
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _send(self, status: int, payload, headers=None):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

        return Handler


class GeminiServer(LLMServer):
    """Speaks ``POST /{v1beta|v1}/models/{model}:generateContent``."""

    def match(self, path: str) -> bool:
        return re.fullmatch(r"/(v1beta|v1)/models/[^/:]+:generateContent", path) is not None

    def prompt_of(self, body: dict) -> str:
        return "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))

    def success(self, text: str, n: int, body: dict) -> dict:
        return {
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100 + n, "candidatesTokenCount": 400,
                              "thoughtsTokenCount": 50, "totalTokenCount": 550 + n},
            "modelVersion": "gemini-test-001",
            "responseId": f"resp-{n}",
        }

    def error(self, status: int) -> dict:
        names = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 400: "INVALID_ARGUMENT",
                 403: "PERMISSION_DENIED"}
        return {"error": {"code": status, "message": f"scripted {status}", "status": names.get(status, "UNKNOWN")}}


class OpenAIServer(LLMServer):
    """Speaks ``POST /v1/chat/completions``."""

    def match(self, path: str) -> bool:
        return path == "/v1/chat/completions"

    def prompt_of(self, body: dict) -> str:
        msgs = body.get("messages") or [{}]
        return msgs[-1].get("content") or ""

    def success(self, text: str, n: int, body: dict) -> dict:
        return {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 300, "total_tokens": 420},
        }

    def error(self, status: int) -> dict:
        return {"error": {"message": f"scripted {status}", "type": "server_error", "code": None}}


# ---------------------------------------------------------------------------- sandbox stand-in

class FakeSandbox:
    """Interprets ``#fake`` programs; records every job it was given."""

    def __init__(self):
        self.jobs: list[Any] = []

    def run_many(self, jobs, workers=None, retries=0):
        from sandbox import CompileInfo, RunResult, TestResult, Verdict, overall_verdict

        for idx, job in enumerate(list(jobs)):
            self.jobs.append(job)
            m = re.match(r"#fake (\{.*\})", job.source.strip())
            spec = json.loads(m.group(1)) if m else {"verdict": "COMPILE_ERROR"}
            forced = spec.get("verdict")
            if forced == "COMPILE_ERROR":
                yield idx, RunResult(Verdict.COMPILE_ERROR, "fake", job.language, True,
                                     CompileInfo(False, message="fake: error: expected ';'"))
                continue
            tests = []
            for t in job.tests:
                verdict = Verdict(forced) if forced else Verdict.OK
                cpu = [float(spec.get("cpu", 0.01))] * job.repeats
                tests.append(TestResult.from_repeats(verdict, cpu, cpu, [1000],
                                                     output=_fake_output(spec.get("out", "sum"), t.input)))
            yield idx, RunResult(overall_verdict(tests), "fake", job.language, True, CompileInfo(True), tests)


def _fake_output(mode: str, stdin: str) -> str:
    nums = [int(x) for x in stdin.split() if x.lstrip("-").isdigit()]
    if mode == "sum":
        return f"{sum(nums)}\n"
    if mode == "sum+1":
        return f"{sum(nums) + 1}\n"
    if mode == "gen":  # input generator: k -> "k+1 numbers"
        k = nums[0] if nums else 0
        return " ".join(str(i) for i in range(k + 1)) + "\n"
    return ""
