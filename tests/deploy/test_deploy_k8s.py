"""The Kubernetes manifests (deploy/kubernetes): rendered by kustomize, valid, and consistent.

Each overlay is rendered with ``kubectl kustomize``; every document is validated offline
against the Kubernetes JSON schemas of a pinned version (``kubernetes-validate``, strict:
unknown fields fail), then checked for what the server needs: a grace period longer than
the drain, probes that run the project's health check, the Wyoming port, the model volume
filled by the downloader and used by the server, server flags that our own parser accepts,
and an autoscaler on a metric the server exports.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from conftest import REPO_ROOT

from wyoming_omnivoice.app import metrics
from wyoming_omnivoice.app.config import parse_config
from wyoming_omnivoice.app.flags import build_parser
from wyoming_omnivoice.model.manifest import load_manifest

KUBERNETES_VERSION = "1.32.0"
K8S = REPO_ROOT / "deploy" / "kubernetes"
OVERLAYS = ("gpu", "cpu")
HEALTH_CHECK = ["python", "-m", "wyoming_omnivoice.health_check"]


def render(overlay: str) -> dict[str, dict[str, Any]]:
    """The overlay's documents by kind."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed (it renders the kustomizations)")
    result = subprocess.run(["kubectl", "kustomize", str(K8S / "overlays" / overlay)],
                            capture_output=True, text=True, timeout=120, check=True)
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    by_kind = {doc["kind"]: doc for doc in docs}
    assert len(by_kind) == len(docs), "one document per kind expected"
    return by_kind


def server_container(docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    containers = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "omnivoice")


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rendered_manifests_are_valid_kubernetes(overlay: str) -> None:
    docs = render(overlay)
    assert set(docs) == {"Deployment", "Service", "PersistentVolumeClaim",
                         "PodDisruptionBudget", "HorizontalPodAutoscaler"}
    for doc in docs.values():
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_server_flags_probes_and_drain(overlay: str) -> None:
    docs = render(overlay)
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    server = server_container(docs)
    assert server["command"] == ["python", "-m", "wyoming_omnivoice"]
    args = parse_config(server["args"])  # every flag is a real one
    metrics.parse_metrics_uri(str(args.metrics_uri))
    assert args.uri == "tcp://0.0.0.0:10200"
    assert args.device == ("cuda" if overlay == "gpu" else "cpu")
    assert args.deterministic
    # preStop pause, then SIGTERM drains for --shutdown-timeout and closes: the kubelet
    # must wait longer than both before SIGKILL
    pause = server["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] > pause + args.shutdown_timeout + 5
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        command = server[probe]["exec"]["command"]
        assert command[:3] == HEALTH_CHECK, probe
        assert flag(command, "--uri") == "tcp://127.0.0.1:10200"
        assert server[probe]["timeoutSeconds"] > float(flag(command, "--timeout"))
    ports = {p["name"]: p for p in server["ports"]}
    assert ports["wyoming"]["containerPort"] == 10200
    host, port = metrics.parse_metrics_uri(args.metrics_uri)
    assert host == "0.0.0.0"  # reachable by Prometheus from outside the pod
    assert ports["metrics"]["containerPort"] == port
    gpus = server.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    assert gpus == (1 if overlay == "gpu" else None)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_model_volume_filled_once_by_the_downloader(overlay: str) -> None:
    docs = render(overlay)
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    claim = docs["PersistentVolumeClaim"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]  # shared by the replicas
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["model"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    (init,) = pod["initContainers"]
    command = init["command"] + init["args"]
    download_args = build_parser().parse_args(command[command.index("wyoming_omnivoice") + 1:])
    assert download_args.download_only
    mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    # the server reads the model folder the downloader fills (manifest's pinned revisions)
    expected = Path(download_args.data_dir) / "models" / load_manifest(None).model_dir
    assert Path(mounts["model"]) == download_args.data_dir
    server = server_container(docs)
    server_args = build_parser().parse_args(server["args"])
    assert server_args.model_dir == expected
    server_mount = next(m for m in server["volumeMounts"] if m["name"] == "model")
    assert server_mount["readOnly"] is True
    assert server_args.model_dir.is_relative_to(server_mount["mountPath"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_service_budget_spread_and_autoscaler(overlay: str) -> None:
    docs = render(overlay)
    pod_labels = docs["Deployment"]["spec"]["template"]["metadata"]["labels"]

    def selects_pods(selector: dict[str, str]) -> bool:
        return all(pod_labels.get(key) == value for key, value in selector.items())

    service = docs["Service"]["spec"]
    assert selects_pods(service["selector"])
    wyoming = next(p for p in service["ports"] if p["name"] == "wyoming")
    assert (wyoming["port"], wyoming["protocol"], wyoming["targetPort"]) == (10200, "TCP",
                                                                             "wyoming")
    assert selects_pods(docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"])
    spread = docs["Deployment"]["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert {c["topologyKey"] for c in spread} >= {"kubernetes.io/hostname"}
    assert all(selects_pods(c["labelSelector"]["matchLabels"]) for c in spread)
    hpa = docs["HorizontalPodAutoscaler"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]
    (metric,) = hpa["metrics"]
    assert metric["type"] == "Pods"
    assert metric["pods"]["metric"]["name"] == f"{metrics.PREFIX}_queue_depth"
    assert hpa["minReplicas"] >= 2  # the budget keeps one up during a drain


def test_prometheus_adapter_rule_serves_the_queue_depth() -> None:
    config = yaml.safe_load((K8S / "prometheus-adapter" / "rules.yaml").read_text())
    (rule,) = config["rules"]["custom"]
    assert rule["seriesQuery"].startswith(f"{metrics.PREFIX}_queue_depth{{")
    assert rule["name"]["as"] == f"{metrics.PREFIX}_queue_depth"
    assert set(rule["resources"]["overrides"]) == {"namespace", "pod"}
