"""A loopback stand-in for the Hugging Face Hub HTTP API, for offline tests.

It speaks just enough of the API for `huggingface_hub` 2.4.0 (`create_repo`, `upload_folder` over the
legacy LFS protocol, so set HF_HUB_DISABLE_XET=1) and for `datasets.load_dataset("ORG/NAME")` to read
the pushed repo back. Repos live in memory, one branch ("main"), one commit hash per commit.
Every request is recorded in `HubServer.requests`; requests the server does not know go to
`HubServer.unknown` and get a 404, so a test can tell a missing route from a client bug.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

REPO = r"(?P<repo>[^/]+(?:/[^/]+)?)"  # NAME or ORG/NAME
PREFIX = r"(?P<prefix>datasets/|spaces/|)"  # URL prefix of the repo type (models have none)
TYPE_OF_PREFIX = {"datasets/": "dataset", "spaces/": "space", "": "model"}
DEFAULT_USER = "tester"  # namespace given to repos created without an organization


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    files: dict[str, bytes] = field(default_factory=dict)
    lfs_paths: set[str] = field(default_factory=set)
    commits: list[dict] = field(default_factory=list)

    @property
    def sha(self) -> str:
        return self.commits[-1]["oid"] if self.commits else "0" * 40

    def entry(self, path: str) -> dict:
        """One file as the tree / paths-info APIs describe it."""
        data = self.files[path]
        e = {"type": "file", "path": path, "size": len(data), "oid": git_blob_oid(data)}
        if path in self.lfs_paths:
            sha = hashlib.sha256(data).hexdigest()
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(data)}\n".encode()
            e.update(oid=git_blob_oid(pointer), lfs={"oid": sha, "size": len(data), "pointerSize": len(pointer)})
        return e

    def dirs(self) -> set[str]:
        return {p.rsplit("/", i)[0] for p in self.files for i in range(1, p.count("/") + 1)}


class HubServer:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> content, uploaded before the commit
        self.requests: list[Request] = []
        self.unknown: list[str] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "HubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def calls(self, method: str, pattern: str) -> list[Request]:
        """Recorded requests whose method matches and whose path matches the regex `pattern`."""
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    # --- routing ---------------------------------------------------------------------------------
    def routes(self):
        return [
            ("GET", r"/api/agent-harnesses", self.agent_harnesses),
            ("POST", r"/api/repos/create", self.create_repo),
            ("POST", r"/api/validate-yaml", self.validate_yaml),
            ("GET", rf"/api/(?P<type>datasets|models|spaces)/{REPO}(?:/revision/(?P<rev>[^/]+))?", self.info),
            ("POST", rf"/api/(?P<type>datasets|models|spaces)/{REPO}/preupload/(?P<rev>[^/]+)", self.preupload),
            ("POST", rf"/api/(?P<type>datasets|models|spaces)/{REPO}/commit/(?P<rev>[^/]+)", self.commit),
            ("GET", rf"/api/(?P<type>datasets|models|spaces)/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", self.tree),
            ("POST", rf"/api/(?P<type>datasets|models|spaces)/{REPO}/paths-info/(?P<rev>[^/]+)", self.paths_info),
            ("POST", rf"/{PREFIX}{REPO}\.git/info/lfs/objects/batch", self.lfs_batch),
            ("PUT", r"/lfs-upload/(?P<oid>[0-9a-f]{64})", self.lfs_put),
            ("POST", r"/lfs-verify/(?P<oid>[0-9a-f]{64})", self.lfs_verify),
            ("HEAD", rf"/{PREFIX}{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", self.resolve),
            ("GET", rf"/{PREFIX}{REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", self.resolve),
        ]

    def handle(self, req: Request):
        """Returns (status, body as dict/list/bytes, extra headers)."""
        for method, pattern, fn in self.routes():
            m = re.fullmatch(pattern, req.path)  # match the raw path: a quoted revision may hold "/"
            if m and (method == req.method):
                with self.lock:  # one request at a time mutates/reads the store
                    return fn(req, **{k: unquote(v) for k, v in m.groupdict().items() if v is not None})
        self.unknown.append(f"{req.method} {req.path}")
        return 404, {"error": f"loopback hub: no route for {req.method} {req.path}"}, {}

    # --- helpers ---------------------------------------------------------------------------------
    def _repo(self, req: Request, type: str, repo: str) -> Repo | None:
        """The repo, or None when it does not exist or is private and the request has no token."""
        r = self.repos.get((type.rstrip("s"), repo))
        if r is None or (r.private and not req.headers.get("authorization")):
            return None  # like the Hub: a private repo is invisible without a token
        return r

    @staticmethod
    def _not_found(what: str):
        return 404, {"error": f"{what} not found"}, {"X-Error-Code": "RepoNotFound"}

    # --- handlers --------------------------------------------------------------------------------
    def agent_harnesses(self, req):
        return 200, {"standardEnvVars": [], "harnesses": {}}, {}

    def create_repo(self, req):
        if not req.headers.get("authorization"):
            return 401, {"error": "Invalid username or password."}, {}
        body = req.json()
        repo_type = body.get("type") or "model"
        repo_id = f"{body.get('organization') or DEFAULT_USER}/{body['name']}"
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.url}/{prefix}{repo_id}"
        if (repo_type, repo_id) in self.repos:
            return 409, {"error": "You already created this repo", "url": url}, {}
        self.repos[(repo_type, repo_id)] = Repo(repo_type, repo_id, private=body.get("visibility") == "private")
        return 200, {"url": url, "name": repo_id}, {}

    def validate_yaml(self, req):
        content = req.json()["content"]
        m = re.match(r"^---\n(.*?)\n---", content, re.S)
        try:
            meta = yaml.safe_load(m.group(1)) if m else {}
        except yaml.YAMLError as e:
            return 400, {"errors": [{"message": f"invalid YAML: {e}"}], "warnings": []}, {}
        if not isinstance(meta, dict):
            return 400, {"errors": [{"message": "metadata must be a mapping"}], "warnings": []}, {}
        return 200, {"errors": [], "warnings": []}, {}

    def info(self, req, type, repo, rev="main"):
        r = self._repo(req, type, repo)
        if r is None:
            return self._not_found(f"repo {repo}")
        card = {}
        if "README.md" in r.files:
            m = re.match(r"^---\n(.*?)\n---", r.files["README.md"].decode(), re.S)
            card = yaml.safe_load(m.group(1)) if m else {}
        return 200, {
            "_id": hashlib.md5(repo.encode()).hexdigest()[:24], "id": r.repo_id, "author": r.repo_id.split("/")[0],
            "sha": r.sha, "private": r.private, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
            "tags": card.get("tags", []), "cardData": card, "lastModified": "2026-01-01T00:00:00.000Z",
            "siblings": [{"rfilename": p} for p in sorted(r.files)],
        }, {}

    def preupload(self, req, type, repo, rev):
        if self._repo(req, type, repo) is None:
            return self._not_found(f"repo {repo}")
        # Parquet goes through LFS (as on the Hub, by .gitattributes); small text files are regular.
        files = [
            {"path": f["path"], "uploadMode": "lfs" if f["path"].endswith(".parquet") else "regular",
             "shouldIgnore": False}
            for f in req.json()["files"]
        ]
        return 200, {"files": files, "commitOid": self.repos[(type.rstrip("s"), repo)].sha}, {}

    def lfs_batch(self, req, prefix, repo):
        if self._repo(req, TYPE_OF_PREFIX[prefix], repo) is None:
            return self._not_found(f"repo {repo}")
        objects = []
        for o in req.json()["objects"]:
            obj = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.lfs_objects:  # no "actions" means: already stored, skip the upload
                obj["actions"] = {"upload": {"href": f"{self.url}/lfs-upload/{o['oid']}"},
                                  "verify": {"href": f"{self.url}/lfs-verify/{o['oid']}"}}
            objects.append(obj)
        return 200, {"transfer": "basic", "objects": objects}, {}

    def lfs_put(self, req, oid):
        if hashlib.sha256(req.body).hexdigest() != oid:
            return 400, {"error": "sha256 mismatch"}, {}
        self.lfs_objects[oid] = req.body
        return 200, b"", {}

    def lfs_verify(self, req, oid):
        ok = oid in self.lfs_objects and len(self.lfs_objects[oid]) == req.json()["size"]
        return (200, {"success": True}, {}) if ok else (404, {"error": "object not uploaded"}, {})

    def commit(self, req, type, repo, rev):
        r = self._repo(req, type, repo)
        if r is None:
            return self._not_found(f"repo {repo}")
        header, ops = {}, []
        for line in req.body.splitlines():  # ndjson: a header item, then one operation per line
            item = json.loads(line)
            if item["key"] == "header":
                header = item["value"]
            else:
                ops.append(item)
        for op in ops:  # check everything first so a bad commit changes nothing
            if op["key"] == "lfsFile" and op["value"]["oid"] not in self.lfs_objects:
                return 422, {"error": f"LFS object for {op['value']['path']} was never uploaded"}, {}
            if op["key"] not in ("file", "lfsFile", "deletedFile", "deletedFolder"):
                return 400, {"error": f"unsupported operation {op['key']}"}, {}
        for op in ops:
            key, v = op["key"], op["value"]
            if key == "file":
                r.files[v["path"]] = base64.b64decode(v["content"])
                r.lfs_paths.discard(v["path"])
            elif key == "lfsFile":
                r.files[v["path"]] = self.lfs_objects[v["oid"]]
                r.lfs_paths.add(v["path"])
            elif key == "deletedFile":
                r.files.pop(v["path"], None)
            else:  # deletedFolder
                for p in [p for p in r.files if p.startswith(v["path"].rstrip("/") + "/")]:
                    del r.files[p]
        oid = hashlib.sha1(f"{r.repo_id}:{len(r.commits)}:{header.get('summary')}".encode()).hexdigest()
        r.commits.append({"oid": oid, "summary": header.get("summary", ""), "ops": ops})
        prefix = "" if r.repo_type == "model" else f"{r.repo_type}s/"
        return 200, {"success": True, "commitOid": oid, "commitUrl": f"{self.url}/{prefix}{r.repo_id}/commit/{oid}"}, {}

    def tree(self, req, type, repo, rev, path=""):
        r = self._repo(req, type, repo)
        if r is None:
            return self._not_found(f"repo {repo}")
        path = path.strip("/")
        recursive = req.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        base = f"{path}/" if path else ""
        if path and path not in r.dirs():
            return 404, {"error": f"path {path} not found"}, {"X-Error-Code": "EntryNotFound"}

        def wanted(p: str) -> bool:
            return p.startswith(base) and (recursive or "/" not in p[len(base):])

        dirs = [{"type": "directory", "path": d, "size": 0, "oid": hashlib.sha1(d.encode()).hexdigest()}
                for d in sorted(r.dirs()) if wanted(d)]
        return 200, dirs + [r.entry(p) for p in sorted(r.files) if wanted(p)], {}

    def paths_info(self, req, type, repo, rev):
        r = self._repo(req, type, repo)
        if r is None:
            return self._not_found(f"repo {repo}")
        ctype = req.headers.get("content-type", "")
        paths = req.json()["paths"] if "json" in ctype else parse_qs(req.body.decode()).get("paths", [])
        out = [r.entry(p) for p in paths if p in r.files]
        out += [{"type": "directory", "path": p, "oid": hashlib.sha1(p.encode()).hexdigest()}
                for p in paths if p in r.dirs()]
        return 200, out, {}

    def resolve(self, req, prefix, repo, rev, path):
        r = self._repo(req, TYPE_OF_PREFIX[prefix], repo)
        if r is None:
            return self._not_found(f"repo {repo}")
        if rev not in ("main", r.sha) or path not in r.files:
            return 404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
        data = r.files[path]
        entry = r.entry(path)
        etag = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
        return 200, data, {"ETag": f'"{etag}"', "X-Repo-Commit": r.sha, "Content-Type": "application/octet-stream"}


def _make_handler(server: HubServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the httpx/requests clients expect

        def _serve(self):
            url = urlsplit(self.path)
            req = Request(self.command, url.path, parse_qs(url.query),
                          {k.lower(): v for k, v in self.headers.items()}, self._body())
            server.requests.append(req)
            status, payload, headers = server.handle(req)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            if not isinstance(payload, bytes):
                self.send_header("Content-Type", "application/json")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":  # streamed uploads
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()  # blank line after the last (empty) chunk
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _serve

        def log_message(self, *args):  # keep pytest output clean; requests are in server.requests
            pass

    return Handler


@contextlib.contextmanager
def hub_server():
    """Run a loopback Hub for the duration of the block; yields the HubServer (its `.url` is the endpoint)."""
    with HubServer() as srv:
        yield srv
