{{/*
Expand the name of the chart.
*/}}
{{- define "vllm-kserve.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "vllm-kserve.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "vllm-kserve.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "vllm-kserve.labels" -}}
helm.sh/chart: {{ include "vllm-kserve.chart" . }}
{{ include "vllm-kserve.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
InfernceService Annotation
*/}}
{{- define "vllm-kserve.inferenceServiceAnnotations" -}}
{{- if .Values.hardwareProfile.namespace }}
opendatahub.io/hardware-profile-namespace: {{ .Values.hardwareProfile.namespace }}
{{- end }}
{{- if .Values.hardwareProfile.name }}
opendatahub.io/hardware-profile-name: {{ .Values.hardwareProfile.name }}
{{- end }}
opendatahub.io/model-type: generative
openshift.io/description: ""
openshift.io/display-name: {{ include "vllm-kserve.fullname" .}}
{{- if .Values.endpoint.auth.enabled }}
security.opendatahub.io/enable-auth: "true"
{{- else }}
security.opendatahub.io/enable-auth: "true"
{{- end }}
{{- if eq .Values.servingTopology "multiNode" }}
serving.kserve.io/autoscalerClass: external
{{- end }}
serving.kserve.io/stop: {{ .Values.scaling.stopped | quote }}
{{- end }}

{{/*
ServingRuntime Annotation
*/}}
{{- define "vllm-kserve.servingRuntimeAnnotations" -}}
opendatahub.io/apiProtocol: REST
{{ include "vllm-kserve.runtimeAnnotation" . }}
opendatahub.io/serving-runtime-scope: project
openshift.io/display-name: {{ .Values.displayName }}
opendatahub.io/template-display-name: {{ .Values.displayName  }}
{{- end }}

{{/*
vLLM Runtime Version Annotation
*/}}
{{- define "vllm-kserve.runtimeAnnotation" -}}
{{- if .Values.image.runtimeVersionOverride }}
opendatahub.io/runtime-version: {{ .Values.image.runtimeVersionOverride }}
{{- else }}
opendatahub.io/runtime-version: {{ .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "vllm-kserve.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vllm-kserve.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Create the name of the ServingRuntime to use
*/}}
{{- define "vllm-kserve.servingRuntimeName" -}}
{{- if eq .Values.servingTopology "singleNode" -}}
{{- default (include "vllm-kserve.fullname" .) .Values.servingRuntime.name -}}
{{- else -}}
{{/*
OpenShift AI 2.22 and early require the servingruntime name to be vllm-multinode-runtime
in order to properly create the ray-tls secret.
Resolved in https://github.com/opendatahub-io/odh-model-controller/commit/7cf654ec55add67ee84ca9d7b40376331b9b3386
*/}}
{{- printf "vllm-multinode-runtime" -}}
{{- end -}}
{{- end }}

{{/*
Create the name of the InfernceService to use
*/}}
{{- define "vllm-kserve.inferenceServiceName" -}}
{{- default (include "vllm-kserve.fullname" .) .Values.inferenceService.name }}
{{- end }}

{{/*
Create the name of the predictor to use
*/}}
{{- define "vllm-kserve.predictorName" -}}
{{- printf "%s-%s" (include "vllm-kserve.inferenceServiceName" .) "predictor" }}
{{- end }}

{{/*
Lookup the Endpoint URL
*/}}
{{- define "vllm-kserve.endpointUrl" -}}
{{- $routeName := include "vllm-kserve.inferenceServiceName" . }}
{{- $route := lookup "route.openshift.io/v1" "Route" .Release.Namespace $routeName }}
{{- if hasKey $route "spec" }}
{{- if hasKey $route.spec "host" }}
{{- printf "https://%s" $route.spec.host }}
{{- end }}
{{- end }}
{{- end }}

{{- define "vllm-kserve.image" -}}
{{- if quote .Values.image.tag | hasPrefix "sha256:" }}
{{- printf "%s@%s" .Values.image.image .Values.image.tag }}
{{- else }}
{{- printf "%s:%s" .Values.image.image .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "vllm-kserve.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vllm-kserve.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
