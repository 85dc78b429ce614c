"""The opt-in Hugging Face Hub lookup, against a fake hub on 127.0.0.1 (never the network)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from cfgcheck import capacity as cap, online
from cfgcheck.capacity import hub
from cfgcheck.cli import app
from cfgcheck.model import Location, ServedModel, Setting

TOKEN = "hf_secret_token_value"
CONFIG = {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 32768,
          "torch_dtype": "bfloat16", "tie_word_embeddings": False}
INDEX = {"metadata": {"total_size": 16060522496}, "weight_map": {}}
REV = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self):
        self.requests: list[tuple[str, str | None]] = []
        self.redirect_to: str | None = None
        self.failing: int | None = None  # an HTTP status every request gets (a Hub outage)
        hub_ = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                hub_.requests.append((self.path, self.headers.get("Authorization")))
                if hub_.failing is not None:
                    self.send_response(hub_.failing)
                    self.end_headers()
                    return
                if hub_.redirect_to and "config.json" in self.path:
                    self.send_response(302)
                    self.send_header("Location", hub_.redirect_to + self.path)
                    self.end_headers()
                    return
                body = None
                if self.path.startswith("/acme/private-8b/resolve/"):
                    body = CONFIG if self.path.endswith("/config.json") else INDEX
                elif self.path.startswith("/acme/list-body/resolve/"):
                    body = [1, 2]
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def hub_client_handed_in():
    """As the command line does for a run whose lookup may be on (``lint_command.hand_hub_client``)."""
    online.use(hub.client)
    yield
    online.use(None)


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    server = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("CFGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CFGCHECK_HUB", raising=False)
    hub._CLIENTS.clear()
    yield server
    server.close()
    hub._CLIENTS.clear()


def served(model_id, **settings):
    loc = Location("m.yaml", 1, 1)
    m = ServedModel(name="m", kind="Deployment", path="m.yaml", document=0, location=loc, engine="vllm",
                    engine_version="0.26.0")
    m.model = Setting("model", model_id, loc, "model")
    for name, value in settings.items():
        m.add(Setting(name, value, loc, name))
    m.gpu_product = "NVIDIA-L40S"
    return m


def test_off_unless_asked(fake_hub):
    est = cap.estimate(served("acme/private-8b"), {})
    assert est.kv_pool_source == "unknown" and fake_hub.requests == []


def test_lookup_at_the_pinned_revision_with_the_token_and_exact_size(fake_hub):
    est = cap.estimate(served("acme/private-8b", model_revision=REV, max_model_len=8192), {"hub": True})
    assert est.kv_pool_source == "estimated" and est.architecture.weight_bytes == INDEX["metadata"]["total_size"]
    assert [p for p, _ in fake_hub.requests] == [f"/acme/private-8b/resolve/{REV}/config.json",
                                                 f"/acme/private-8b/resolve/{REV}/model.safetensors.index.json"]
    assert all(auth == f"Bearer {TOKEN}" for _, auth in fake_hub.requests)
    assert any("from the Hub" in r for r in est.reasons)
    assert TOKEN not in json.dumps(est.to_dict()) and TOKEN not in repr(hub.client({}))


def test_answers_are_cached_on_disk(fake_hub, tmp_path):
    cap.estimate(served("acme/private-8b", model_revision=REV), {"hub": True})
    count = len(fake_hub.requests)
    hub._CLIENTS.clear()
    est = cap.estimate(served("acme/private-8b", model_revision=REV), {"hub": True})
    assert len(fake_hub.requests) == count and est.architecture.source == "hub"
    assert list((tmp_path / "cache" / "hub").glob("*.json"))


def test_offline_falls_back_to_the_bundled_table_with_a_note(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv("CFGCHECK_CACHE_DIR", str(tmp_path))
    hub._CLIENTS.clear()
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192), {"hub": True, "hub-timeout": 2})
    assert est.kv_pool_source == "estimated" and est.architecture.source == "bundled"
    assert any("hub lookup of meta-llama/Llama-3.1-8B-Instruct@main failed" in r for r in est.reasons)
    hub._CLIENTS.clear()


def test_a_lookup_without_a_client_handed_in_says_so(fake_hub):
    online.use(None)
    est = cap.estimate(served("acme/private-8b", model_revision=REV), {"hub": True})
    assert fake_hub.requests == [] and est.architecture is None
    assert any("no Hub client was handed in" in reason for reason in est.reasons)


def test_hostile_ids_and_bodies_are_refused(fake_hub):
    assert hub.client({}).lookup("../etc/passwd").note and fake_hub.requests == []
    assert hub.client({}).lookup("acme/list-body").config is None
    assert hub.client({}).lookup("acme/missing").note.endswith("bundled table used")


def test_token_not_sent_across_a_redirect_to_another_host(fake_hub):
    other = FakeHub()
    try:
        fake_hub.redirect_to = other.url
        answer = hub.HubClient().lookup("acme/private-8b")
        assert answer.config == CONFIG
        assert other.requests and all(auth is None for _, auth in other.requests)
    finally:
        other.close()


def test_cli_online_flag(fake_hub, tmp_path):
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: private}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}\n      containers:\n      - name: vllm\n"
        "        image: vllm/vllm-openai:v0.26.0\n"
        "        args: [--model, acme/private-8b, --max-model-len, '8192']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n")
    runner = CliRunner()
    offline = runner.invoke(app, ["capacity", "-f", "json", str(tmp_path)])
    online = runner.invoke(app, ["capacity", "-f", "json", "--online", str(tmp_path)])
    assert offline.exit_code == 0 and online.exit_code == 0, online.output
    assert json.loads(offline.stdout)["models"][0]["kv_pool_source"] == "unknown"
    assert json.loads(online.stdout)["models"][0]["kv_pool_source"] == "estimated"
    assert TOKEN not in online.output


def test_a_failed_lookup_is_asked_once_per_run(fake_hub, tmp_path):
    """A Hub outage (503, not cached on disk) was asked again for every estimate: 44 requests for two
    models in one lint run. Once per model and file, then the bundled table, with the same note."""
    fake_hub.failing = 503
    models = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct")  # in the bundled table: estimated anyway
    manifest = tmp_path / "two.yaml"
    manifest.write_text("".join(f"""\
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m{index}}}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "{name}", "--max-model-len", "999999999", "--max-num-seqs", "4"]
""" for index, name in enumerate(models)), encoding="utf-8")
    result = CliRunner().invoke(app, ["lint", str(manifest), "--online", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    assert sorted(path for path, _ in fake_hub.requests) == sorted(f"/{name}/resolve/main/config.json"
                                                                   for name in models)
