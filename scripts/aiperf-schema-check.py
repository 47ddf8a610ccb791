#!/usr/bin/env python3
"""Checks a capture-replay results folder against NVIDIA AIPerf's own output models.

Usage: python3 scripts/aiperf-schema-check.py RESULTS_FOLDER

RESULTS_FOLDER holds one target's files (profile_export.jsonl, profile_export_aiperf.json).
Every line of profile_export.jsonl and the aggregate JSON are checked; each failure is
printed with its file and line number. Exit 0: all valid; 1: a check failed; 2: bad usage,
missing file, or pydantic/msgspec not installed (pip install pydantic msgspec).

The models below are written from AIPerf's source, not imported (AIPerf is not installable
here) and not copied: they declare the same fields, types and strictness. Sources read, in
the public repository ai-dynamo/aiperf (path @ stored commit):

  Per-request records (profile_export.jsonl)
  - src/aiperf/common/models/record_export_models.py @ 745695dd14c122a737a25b2747ba666538f79078
      MetricRecordInfo (msgspec Struct: metadata, metrics, trace_data, error) and
      decode_metric_record_info_json: metadata -> metric_record_metadata_from_model(dict),
      metrics -> MetricValue(**value) per key, error -> msgspec.convert(.., ErrorDetails);
      other top-level keys are not read.
  - src/aiperf/common/metric_records_wire.py @ 017c63d230ace93f323d5e423e95a6bb9aad1335
      (same fields @ ab282c4941c449a9f465ead8f389106a8bd983e9)
      MetricRecordMetadata (msgspec Struct, kw_only) and metric_record_metadata_from_model,
      which builds it as MetricRecordMetadata(**metadata): an unknown key is a TypeError.
  - src/aiperf/common/models/metric_result_models.py @ 282840a71575580e3e1e56b874e5fcd7f1e90643
      MetricValue (frozen dataclass: value, unit).
  - src/aiperf/common/models/error_models.py @ 028de33757d6e5d8e3d145a850a695edbdfc967b
      ErrorDetails and ErrorDetailsCount (dataclasses, pydantic config extra="forbid").
  - src/aiperf/common/enums (CreditPhase: warmup, profiling).

  Aggregate (profile_export_aiperf.json)
  - src/aiperf/common/models/export_models.py: JsonMetricResult (schema 1.1: count, sum) and
      JsonExportData (extra="allow"; input_config typed as the config model). The version with
      `input_config: BenchmarkConfig | None` and SCHEMA_VERSION 1.3 was read through the
      search index (file id 56309988195, commit not shown); @ 896729cf0dc4088ec48374948bedd05f59563e16
      has the same metric fields with the older UserConfig.
  - docs/reference/json-export-schema.md @ 1554b478d4eec073cb23365b2c1e1b6dbece2e62
      (schema 1.5; "input_config: Resolved BenchmarkConfig body").
  - src/aiperf/exporters/metrics_json_exporter.py @ 047d59dd4bca43ff272f46c6b4af0ebb62cb8ad0
      (input_config=self._cfg; dumped with exclude_unset, exclude_none, snake_case keys).
  - src/aiperf/common/models/base_models.py @ 0bb320b9c56460856c3a8ec8580daef8bc43d266
      (AIPerfBaseModel: extra="allow").
  - src/aiperf/config/config.py @ 0205ea144a6298c69e6acce607c31345fd885347 (BenchmarkConfig,
      extra="forbid": required models, endpoint, datasets [exactly 1], phases [a profiling one]).
  - src/aiperf/config/base.py @ dfcac739c87a6ff76fea27252fac1dc2348f7cd0 (camelCase aliases,
      populate_by_name: snake_case keys accepted too).
  - src/aiperf/config/endpoint.py @ 0205ea144a6298c69e6acce607c31345fd885347 (EndpointConfig).
  - src/aiperf/config/models.py @ 0125258fd42a5efded23e7ddc09e4d1dfe495cac (ModelsAdvanced, ModelItem).
  - src/aiperf/config/dataset/config.py @ 0205ea144a6298c69e6acce607c31345fd885347 (FileDataset).
  - src/aiperf/config/phases.py @ 0205ea144a6298c69e6acce607c31345fd885347 (FixedSchedulePhase).
  - src/aiperf/config/resolution/predicates.py @ 58028d5ba1cb33b0e135e18f1cc8833556a3639e
      (fixed_schedule needs sequential sampling).

Where this check is stricter than AIPerf, on purpose: metadata field types are checked
(msgspec's Struct constructor does not check them), URLs must carry no userinfo, and every
extra top-level block that looks like a metric (has "unit") must be a valid JsonMetricResult,
as AIPerf's JsonMetricResult.project_summary_dict reads them. Only the dataset and phase
variants capture-replay writes (file dataset, fixed_schedule phase) are declared; other
sections of BenchmarkConfig are accepted as given.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Literal

try:
    import msgspec
    from pydantic import (
        BaseModel,
        ConfigDict,
        Field,
        StrictBool,
        StrictFloat,
        StrictInt,
        StrictStr,
        ValidationError,
        field_validator,
        model_validator,
    )
    from pydantic.alias_generators import to_camel
except ImportError as exc:  # pragma: no cover - reported to the caller
    print(f"aiperf-schema-check: {exc}; install with: python3 -m pip install pydantic msgspec", file=sys.stderr)
    sys.exit(2)

RECORDS_FILE = "profile_export.jsonl"
AGGREGATE_FILE = "profile_export_aiperf.json"

# --------------------------------------------------------------------------------------------
# Per-request records
# --------------------------------------------------------------------------------------------

CreditPhaseT = Literal["warmup", "profiling"]


class MetricRecordMetadata(BaseModel):
    """AIPerf's wire MetricRecordMetadata: these keys and no others."""

    model_config = ConfigDict(extra="forbid", strict=True)

    request_num: StrictInt | None = None
    session_num: StrictInt
    x_request_id: StrictStr | None = None
    x_correlation_id: StrictStr | None = None
    conversation_id: StrictStr | None = None
    turn_index: StrictInt | None = None
    credit_issued_ns: StrictInt | None = None
    credit_received_ns: StrictInt | None = None
    request_start_ns: StrictInt
    request_ack_ns: StrictInt | None = None
    request_end_ns: StrictInt
    worker_id: StrictStr
    record_processor_id: StrictStr
    benchmark_phase: CreditPhaseT
    was_cancelled: StrictBool = False
    cancellation_time_ns: StrictInt | None = None
    clock_offset_ns: StrictInt | None = None


MetricValueT = StrictInt | StrictFloat | list[StrictInt | StrictFloat]


class MetricValue(BaseModel):
    """AIPerf's MetricValue(value, unit), built as MetricValue(**value): exactly these keys."""

    model_config = ConfigDict(extra="forbid")

    value: MetricValueT
    unit: StrictStr


class ErrorDetails(BaseModel):
    """AIPerf's ErrorDetails (pydantic config extra="forbid")."""

    model_config = ConfigDict(extra="forbid")

    message: StrictStr
    code: StrictInt | None = None
    type: StrictStr | None = None
    cause: StrictStr | None = None
    cause_chain: list[StrictStr] | None = None
    details: Any | None = None


class MetricRecordInfo(BaseModel):
    """AIPerf's MetricRecordInfo; other top-level keys (our capture_replay) are not read."""

    model_config = ConfigDict(extra="ignore")

    metadata: MetricRecordMetadata
    metrics: dict[str, MetricValue]
    trace_data: dict[str, Any] | None = None
    error: ErrorDetails | None = None


# The decoder path itself, as AIPerf runs it: msgspec Struct / dataclass constructors.
class _WireMetadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    request_num: int | None = None
    session_num: int
    x_request_id: str | None = None
    x_correlation_id: str | None = None
    conversation_id: str | None = None
    turn_index: int | None = None
    credit_issued_ns: int | None = None
    credit_received_ns: int | None = None
    request_start_ns: int
    request_ack_ns: int | None = None
    request_end_ns: int
    worker_id: str
    record_processor_id: str
    benchmark_phase: str
    was_cancelled: bool = False
    cancellation_time_ns: int | None = None
    clock_offset_ns: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _WireMetricValue:
    value: Any
    unit: str


@dataclasses.dataclass(slots=True, kw_only=True)
class _WireErrorDetails:
    message: str
    code: int | None = None
    type: str | None = None
    cause: str | None = None
    cause_chain: list[str] | None = None
    details: Any | None = None


def decode_like_aiperf(payload: dict[str, Any]) -> None:
    """Mirror of decode_metric_record_info_json: raises where AIPerf's decoder raises."""
    _WireMetadata(**payload["metadata"])
    for value in payload["metrics"].values():
        _WireMetricValue(**value)
    if payload.get("error"):
        msgspec.convert(payload["error"], _WireErrorDetails)


# --------------------------------------------------------------------------------------------
# Aggregate: JsonExportData and the BenchmarkConfig parts capture-replay writes
# --------------------------------------------------------------------------------------------


class _Config(BaseModel):
    """AIPerf's BaseConfig: camelCase aliases, snake_case accepted; unknown keys rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


def _check_url(url: str) -> str:
    from urllib.parse import urlparse

    if url != url.strip() or any(ch.isspace() for ch in url):
        raise ValueError(f"URL {url!r} contains whitespace")
    parsed = urlparse(url)
    if not parsed.scheme or not parsed.netloc or not parsed.hostname:
        raise ValueError(f"URL {url!r} is missing scheme or host")
    if parsed.scheme.lower() not in ("http", "https", "grpc", "grpcs", "dynosim"):
        raise ValueError(f"URL {url!r} has unsupported scheme {parsed.scheme!r}")
    port = parsed.port  # raises ValueError on a bad port
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"URL {url!r} has port {port} outside 1..65535")
    if parsed.username is not None or parsed.password is not None:
        raise ValueError(f"URL {url!r} carries userinfo (a password must never be exported)")
    return url


class EndpointConfig(_Config):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", validate_default=True)

    urls: list[str] = Field(min_length=1)
    url_strategy: str = "round_robin"
    type: str = Field(default="chat", min_length=1)
    path: str | None = None
    api_key: str | None = None
    timeout: float = Field(default=6 * 60 * 60, ge=0.0)
    streaming: bool = False
    transport: str | None = None
    connection_reuse: str = "pooled"
    http2: bool = False
    ssl_verify: bool = True
    uds_path: str | None = None
    connection_limit: int = Field(default=2500, ge=1, le=65000)
    keepalive_timeout: float = Field(default=300.0, ge=0.0, le=10000.0)
    use_legacy_max_tokens: bool = False
    use_server_token_count: bool = False
    template: dict[str, Any] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    download_video_content: bool = False
    request_content_type: str | None = None
    session_header: str | None = None
    uuid_and_strip: bool = False
    wait_for_model_timeout: float = Field(default=0.0, ge=0.0)
    wait_for_model_interval: float = Field(default=5.0, gt=0.0)
    wait_for_model_mode: Literal["models", "inference", "both"] = "inference"

    @model_validator(mode="before")
    @classmethod
    def _url_to_urls(cls, data: Any) -> Any:
        if isinstance(data, dict) and "url" in data:
            data = dict(data)
            url = data.pop("url")
            data.setdefault("urls", [url] if isinstance(url, str) else url)
        return data

    @field_validator("urls")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        return [_check_url(u) for u in urls]

    @field_validator("path")
    @classmethod
    def _path(cls, path: str | None) -> str | None:
        if path is not None and not path.startswith("/"):
            raise ValueError("endpoint.path must start with a leading slash")
        return path


class ModelItem(_Config):
    name: str
    weight: float | None = Field(default=None, ge=0.0, le=1.0)
    lora: str | None = None
    modalities: list[str] | None = None
    tokenizer: dict[str, Any] | None = None


class ModelsAdvanced(_Config):
    strategy: str = "round_robin"
    items: list[ModelItem] = Field(min_length=1)


DatasetFormatT = Literal[
    "single_turn",
    "multi_turn",
    "mooncake_trace",
    "bailian_trace",
    "baseten_trace",
    "burst_gpt_trace",
    "weka_trace",
    "dynamo_trace",
    "sagemaker_data_capture",
    "random_pool",
]


class FileDataset(_Config):
    name: str = Field(min_length=1)
    type: Literal["file"]
    path: str | None = None
    records: list[dict[str, Any]] | dict[str, list[dict[str, Any]]] | None = None
    format: DatasetFormatT = "single_turn"
    sampling: Literal["sequential", "random", "shuffle"] = "sequential"
    synthesis: dict[str, Any] | None = None
    entries: int | None = Field(default=None, ge=1)
    random_seed: int | None = None
    trace_session_sample_ratio: float | None = Field(default=None, gt=0.0, le=1.0)
    inter_turn_delay_cap_seconds: float | None = Field(default=None, ge=0.0)
    max_idle_gap_cap_seconds: float | None = Field(default=None, gt=0.0)
    replay_speedup: float | None = Field(default=None, gt=0.0)
    open_loop_replay: bool = True
    open_loop_strict: bool = False
    omit_kv_hints: bool = False
    force_min_tokens: bool = True
    osl: Any | None = None
    block_size: int | None = Field(default=None, ge=1)
    trace_idle_gap_cap_seconds: float | None = Field(default=None, ge=0.0)
    ignore_trace_delays: bool = False
    use_think_time_only: bool = False
    max_context_length: int | None = Field(default=None, ge=1)
    cache_bust: dict[str, Any] | None = None
    prompts: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FileDataset:
        if (self.path is None) == (self.records is None):
            raise ValueError("FileDataset requires exactly one source: path or records")
        return self


class FixedSchedulePhase(_Config):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")
    kind: Literal["warmup", "profiling"] | None = None
    type: Literal["fixed_schedule"]
    exclude_from_results: bool = False
    requests: int | None = Field(default=None, ge=1)
    duration: float | str | None = None
    sessions: int | None = Field(default=None, ge=1)
    agentic_cache_warmup_duration: float | None = Field(default=None, gt=0)
    concurrency: int | None = Field(default=None, ge=1)
    concurrency_ramp: Any | None = None
    prefill_concurrency: int | None = Field(default=None, ge=1)
    prefill_ramp: Any | None = None
    grace_period: float | str | None = None
    cancellation: dict[str, Any] | None = None
    sla: list[dict[str, Any]] = Field(default_factory=list)
    seamless: bool = False
    timing_mode: str | None = None
    failed_request_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    trajectory_start_min_ratio: float = Field(default=0.25, ge=0.0, le=1.0)
    trajectory_start_max_ratio: float = Field(default=0.75, ge=0.0, le=1.0)
    burst_phase_starts: bool = False
    agentic_warmup_grace_period: float | None = Field(default=None, ge=0)
    auto_offset: bool = True
    start_offset: int | None = Field(default=None, ge=0)
    end_offset: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _constraints(self) -> FixedSchedulePhase:
        if self.kind is None and self.name in ("warmup", "profiling"):
            self.kind = self.name  # AIPerf's legacy inference from the canonical names
        if self.kind is None:
            raise ValueError(f"phase {self.name!r}: kind is required for non-canonical phase names")
        if self.name in ("warmup", "profiling") and self.kind != self.name:
            raise ValueError(f"phase name {self.name!r} is reserved for kind {self.name!r}")
        if self.auto_offset and self.start_offset is not None:
            raise ValueError("auto_offset cannot be True when start_offset is set")
        if self.start_offset is not None and self.end_offset is not None and self.start_offset > self.end_offset:
            raise ValueError("start_offset must be <= end_offset")
        if self.prefill_concurrency is not None and self.concurrency is not None and self.prefill_concurrency > self.concurrency:
            raise ValueError("prefill_concurrency must be <= concurrency")
        if self.grace_period is not None and self.duration is None:
            raise ValueError("grace_period requires duration")
        return self


class BenchmarkConfig(_Config):
    """AIPerf's BenchmarkConfig top level: every key it declares, no other."""

    models: ModelsAdvanced
    model: Any | None = None
    endpoint: EndpointConfig
    endpoint_profiles: dict[str, EndpointConfig] = Field(default_factory=dict)
    datasets: list[FileDataset] = Field(min_length=1, max_length=1)
    dataset: Any | None = None
    phases: list[FixedSchedulePhase] = Field(min_length=1)
    warmup: Any | None = None
    profiling: Any | None = None
    artifacts: Any | None = None
    slos: dict[str, float] | None = None
    tokenizer: Any | None = None
    gpu_telemetry: Any | None = None
    server_metrics: Any | None = None
    network_latency: Any | None = None
    otel: Any | None = None
    mlflow: Any | None = None
    wandb: Any | None = None
    runtime: Any | None = None
    failure_policy: Literal["continue", "abort"] | None = None
    logging: Any | None = None
    metrics: Any | None = None
    accuracy: Any | None = None
    scenario: str | None = None
    unsafe_override: bool = False

    @model_validator(mode="before")
    @classmethod
    def _models_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("models"), (str, list)):
            names = [data["models"]] if isinstance(data["models"], str) else data["models"]
            data = {**data, "models": {"items": [n if isinstance(n, dict) else {"name": n} for n in names]}}
        return data

    @model_validator(mode="after")
    def _cross_checks(self) -> BenchmarkConfig:
        names = [p.name.lower() for p in self.phases]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate phase names: {names}")
        if not any(p.kind == "profiling" for p in self.phases):
            raise ValueError("a 'profiling' phase is required")
        if self.phases[0].seamless:
            raise ValueError("the first phase cannot be seamless")
        for phase in self.phases:
            if phase.prefill_concurrency is not None and not self.endpoint.streaming:
                raise ValueError(f"phase {phase.name!r}: prefill_concurrency requires endpoint.streaming")
            if self.datasets[0].sampling != "sequential":
                raise ValueError(f"phase {phase.name!r} uses fixed_schedule which requires sequential sampling")
        return self


class JsonMetricResult(BaseModel):
    """AIPerf's JsonMetricResult (AIPerfBaseModel: extra keys allowed)."""

    model_config = ConfigDict(extra="allow")

    unit: str
    avg: float | None = None
    p1: float | None = None
    p5: float | None = None
    p10: float | None = None
    p25: float | None = None
    p50: float | None = None
    p75: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: int | float | None = None
    max: int | float | None = None
    std: float | None = None
    count: int | None = None
    sum: int | float | None = None


class ErrorDetailsCount(BaseModel):
    model_config = ConfigDict(extra="forbid")

    error_details: ErrorDetails
    count: int


_DECLARED_METRICS = (
    "request_throughput request_latency request_count time_to_first_token time_to_second_token "
    "inter_token_latency output_token_throughput output_token_throughput_per_user "
    "output_sequence_length input_sequence_length goodput good_request_count output_token_count "
    "reasoning_token_count min_request_timestamp max_response_timestamp inter_chunk_latency "
    "total_output_tokens total_reasoning_tokens benchmark_duration total_isl total_osl "
    "error_request_count error_isl total_error_isl"
).split()


class JsonExportData(BaseModel):
    """AIPerf's JsonExportData: declared fields typed, any other top-level key allowed."""

    model_config = ConfigDict(extra="allow")

    schema_version: str | None = None
    aiperf_version: str | None = None
    benchmark_id: str | None = None
    telemetry_data: dict[str, Any] | None = None
    input_config: BenchmarkConfig | None = None
    run_info: dict[str, Any] | None = None
    was_cancelled: bool | None = None
    error_summary: list[ErrorDetailsCount] | None = None
    start_time: Any | None = None
    end_time: Any | None = None
    branch_stats: dict[str, Any] | None = None

    @field_validator("start_time", "end_time")
    @classmethod
    def _datetime(cls, value: Any) -> Any:
        from datetime import datetime

        if value is not None:
            datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return value

    @model_validator(mode="before")
    @classmethod
    def _metric_blocks(cls, data: Any) -> Any:
        # Declared metric fields are JsonMetricResult | None; so is every extra block AIPerf's
        # project_summary_dict would pick up (a dict with "unit").
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None or not (key in _DECLARED_METRICS or (isinstance(value, dict) and "unit" in value)):
                    continue
                try:
                    JsonMetricResult.model_validate(value)
                except ValidationError as exc:
                    raise ValueError(f"{key} is not a JsonMetricResult: {'; '.join(_errors(exc))}") from None
        return data


# --------------------------------------------------------------------------------------------


def _errors(exc: Exception) -> list[str]:
    if isinstance(exc, ValidationError):
        out = []
        for e in exc.errors():
            loc = ".".join(str(p) for p in e.get("loc", ()))
            out.append(f"{loc}: {e.get('msg')}" if loc else str(e.get("msg")))
        return out
    return [f"{type(exc).__name__}: {exc}"]


def check_records(path: Path) -> tuple[int, list[str]]:
    failures: list[str] = []
    count = 0
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            count += 1
            where = f"{path.name}:{number}"
            try:
                payload = json.loads(line)
            except json.JSONDecodeError as exc:
                failures.append(f"{where}: not JSON: {exc}")
                continue
            if not isinstance(payload, dict):
                failures.append(f"{where}: not a JSON object")
                continue
            try:
                MetricRecordInfo.model_validate(payload)
            except ValidationError as exc:
                failures.extend(f"{where}: {m}" for m in _errors(exc))
                continue
            try:
                decode_like_aiperf(payload)
            except (TypeError, KeyError, ValueError, msgspec.ValidationError) as exc:
                failures.append(f"{where}: AIPerf's decoder would fail: {type(exc).__name__}: {exc}")
    return count, failures


def check_aggregate(path: Path) -> list[str]:
    try:
        JsonExportData.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        return [f"{path.name}: {m}" for m in _errors(exc)]
    except ValueError as exc:
        return [f"{path.name}: {exc}"]
    return []


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    folder = Path(argv[1])
    records, aggregate = folder / RECORDS_FILE, folder / AGGREGATE_FILE
    missing = [p.name for p in (records, aggregate) if not p.is_file()]
    if missing:
        print(f"aiperf-schema-check: {folder}: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    count, failures = check_records(records)
    failures += check_aggregate(aggregate)
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        print(f"aiperf-schema-check: {len(failures)} failure(s) in {folder}", file=sys.stderr)
        return 1
    print(f"aiperf-schema-check: OK: {count} record(s) in {RECORDS_FILE}, {AGGREGATE_FILE} valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
