"""The values files a repository's Argo CD Applications and ApplicationSets render a local chart with
(render/deployments.py): read from the repository's files, nothing rendered."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.render.deployments import Deployment, of_chart
from helpers import make_repo

CHART = {"deploy/chart/Chart.yaml": "apiVersion: v2\nname: model\nversion: 1.0.0\n",
         "deploy/chart/values.yaml": "model: ''\n",
         "models/a.yaml": "model: org/a\nname: a\n", "models/b.yaml": "model: org/b\nname: b\n",
         "clusters/prod/llm/values.yaml": "model: org/c\n", "clusters/prod/web/values.yaml": "replicas: 2\n"}


def _appset(generators: str, source: str, go: bool = False) -> str:
    return (f"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: models\nspec:\n"
            f"  goTemplate: {'true' if go else 'false'}\n  generators:\n{generators}  template:\n    spec:\n"
            f"{source}")


def _values(tmp_path: Path, files: dict[str, str]) -> list[str | None]:
    return [d.values for d in of_chart(make_repo(tmp_path, {**CHART, **files}), "deploy/chart", {})]


def test_a_git_files_generator_gives_one_deployment_per_file(tmp_path: Path) -> None:
    appset = _appset("    - git:\n        repoURL: r\n        files:\n          - path: models/*.yaml\n",
                     "      source:\n        repoURL: r\n        path: deploy/chart\n        helm:\n"
                     "          valueFiles: [values.yaml, '../../{{path}}/{{path.filename}}']\n")
    assert _values(tmp_path, {"argocd/appset.yaml": appset}) == ["models/a.yaml", "models/b.yaml"]


def test_a_directories_generator_under_go_templates(tmp_path: Path) -> None:
    appset = _appset("    - git:\n        repoURL: r\n        directories:\n          - path: clusters/*/*\n"
                     "          - path: clusters/*/web\n            exclude: true\n",
                     "      source:\n        repoURL: r\n        path: deploy/chart\n        helm:\n"
                     "          valueFiles: ['../../{{ .path.path }}/values.yaml']\n", go=True)
    assert _values(tmp_path, {"argocd/appset.yaml": appset}) == ["clusters/prod/llm/values.yaml"]


def test_a_multi_source_application_names_its_values_through_a_ref(tmp_path: Path) -> None:
    app = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  sources:\n"
           "    - repoURL: r\n      path: deploy/chart\n      helm:\n        valueFiles: [$values/models/a.yaml]\n"
           "    - repoURL: r\n      ref: values\n")
    assert _values(tmp_path, {"argocd/app.yaml": app}) == ["models/a.yaml"]


def test_what_cannot_be_resolved_is_a_deployment_without_a_values_file(tmp_path: Path) -> None:
    """A template function, inline values, a file of another repository: the chart is deployed, but
    not with one values file cfgcheck can render it with."""
    piped = _appset("    - git:\n        repoURL: r\n        files:\n          - path: models/*.yaml\n",
                    "      source:\n        repoURL: r\n        path: deploy/chart\n        helm:\n"
                    "          valueFiles: ['../../models/{{ .path.filename | lower }}']\n", go=True)
    inline = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: i\nspec:\n  source:\n"
              "    repoURL: r\n    path: deploy/chart\n    helm:\n      valueFiles: [../../models/a.yaml]\n"
              "      valuesObject: {gpus: 1}\n")
    found = of_chart(make_repo(tmp_path, {**CHART, "argocd/piped.yaml": piped, "argocd/inline.yaml": inline}),
                     "deploy/chart", {})
    assert [d.values for d in found] == [None, None, None]
    assert isinstance(found[0], Deployment) and "argocd/inline.yaml" in found[0].by


def test_another_chart_or_no_deployment(tmp_path: Path) -> None:
    app = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  source:\n"
           "    repoURL: r\n    path: other/chart\n    helm:\n      valueFiles: [../../models/a.yaml]\n")
    assert _values(tmp_path, {"argocd/app.yaml": app}) == []
