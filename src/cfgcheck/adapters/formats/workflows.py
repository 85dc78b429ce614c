"""GitHub Actions workflows (``.github/workflows/*.yml``) that start an engine: a ``run:`` step's
commands (``vllm serve ...``, ``python -m sglang.launch_server ...``, ``docker run ... vllm/vllm-openai
...``, read as ``launch/scripts.py`` reads a script, with the literal ``env`` of the workflow, job
and step), and ``services:`` containers of an engine image (their ``options`` are ``docker create``
options: ``--gpus``, ``-e``, ``--entrypoint``). ``${{ ... }}`` expressions are unknown values.
"""

from __future__ import annotations

from ...model import ArgToken, ServedModel
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import ENGINE_MARKERS, env_value_nodes, literal_env
from ..launch.scripts import docker_run, scalar_launches, script_model
from ..launch.shell import argv_tokens

MARKERS = ENGINE_MARKERS
DOCUMENTS = "plain"  # never a Kubernetes resource: the registry does not try it on one


def _is_workflow(root: YNode) -> bool:
    jobs = root.get("jobs")
    return jobs is not None and jobs.kind == "map" and root.get("apiVersion") is None and \
        any(job.kind == "map" and (job.get("steps") is not None or job.get("runs-on") is not None)
            for _, job in jobs.items())


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if not _is_workflow(root):
        return []
    found: list[ServedModel] = []
    base_env = literal_env(root.get("env"), {})
    for key, job in root.get("jobs").items():
        if key.kind != "scalar" or job.kind != "map":
            continue
        job_env = literal_env(job.get("env"), base_env)
        found.extend(_service_models(ctx, str(key.value), job))
        steps = job.get("steps")
        for index, step in enumerate(steps.value if steps is not None and steps.kind == "seq" else []):
            run = step.get("run") if step.kind == "map" else None
            if run is None or run.kind != "scalar" or not isinstance(run.value, str):
                continue
            env = literal_env(step.get("env"), job_env)
            label = str(step.scalar("name") or step.scalar("id") or f"step {index + 1}")
            for number, launched in enumerate(scalar_launches(ctx, run, env)):
                name = f"{key.value}/{label}" + (f"#{number + 1}" if number else "")
                model = script_model(ctx.workspace, ctx.loaded, launched, "workflow step",
                                     f"workflow/{key.value}/{index}/{number}", number,
                                     (ctx.first_line - 1, root.end_line), name)
                if model is not None:
                    found.append(model)
    return found


def _service_models(ctx: DocContext, job: str, node: YNode) -> list[ServedModel]:
    """``services:`` containers of an engine image: the engine runs what its image's entrypoint runs."""
    services = node.get("services")
    found: list[ServedModel] = []
    for index, (key, service) in enumerate(services.items() if services is not None and services.kind == "map" else []):
        image = service.get("image") if service.kind == "map" else None
        if image is None or image.kind != "scalar" or not isinstance(image.value, str):
            continue
        options = argv_tokens(ctx, service.get("options"), "options")
        words = options + [ctx.token(image, "image")] + argv_tokens(ctx, service.get("command"), "args")
        launched = docker_run(words)
        if launched is None:
            continue
        for name, value in env_value_nodes(service.get("env")):
            launched.env[name] = ArgToken(str(value.value), ctx.location(value), ctx.comments(value.line), "env")
        model = script_model(ctx.workspace, ctx.loaded, launched, "workflow service", f"workflow/{job}/services/{index}",
                             0, (ctx.first_line - 1, node.end_line), f"{job}/{key.value}")
        if model is not None:
            found.append(model)
    return found
