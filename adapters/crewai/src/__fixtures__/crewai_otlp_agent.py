"""SYNTHETIC process agent (python3, stdlib only): stands in for a CrewAI crew instrumented with
openinference-instrumentation-crewai, which cannot be installed here.

It sends one hand-encoded OTLP/JSON ExportTraceServiceRequest shaped like that instrumentation's spans (reference
typescript-frameworks.md section 7.2 / 8) using ONLY the OpenTelemetry variables that AGL's runner sets for a process
agent, exactly as the Python OTel SDK reads them:
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full URL of the store's /v1/traces
  OTEL_RESOURCE_ATTRIBUTES            agentlightning.rollout_id=...,agentlightning.attempt_id=... (owner of the spans)
  OTEL_EXPORTER_OTLP_HEADERS          Authorization=Bearer%20<token> (W3C-baggage style, values URL-encoded)
plus AGL_TASK_INPUT for the task. It prints what it sent and the HTTP status as JSON on stdout.
"""
import json
import os
import sys
import time
import urllib.parse
import urllib.request


def parse_pairs(value):
    """OTEL_RESOURCE_ATTRIBUTES / OTEL_EXPORTER_OTLP_HEADERS: comma-separated key=value, URL-decoded."""
    out = {}
    for item in (value or "").split(","):
        if "=" in item:
            key, val = item.split("=", 1)
            out[urllib.parse.unquote(key.strip())] = urllib.parse.unquote(val.strip())
    return out


def attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}  # the Python exporter writes int64 as a string
    return {"key": key, "value": {"stringValue": str(value)}}


TRACE_ID = os.urandom(16).hex()
_clock = [time.time_ns()]


def span(name, attributes, parent=None, kind=1):
    start = _clock[0]
    _clock[0] += 1_000_000
    return {
        "traceId": TRACE_ID,
        "spanId": os.urandom(8).hex(),
        "parentSpanId": parent["spanId"] if parent else "",
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 500_000),
        "attributes": [attr(k, v) for k, v in attributes.items()],
        "status": {"code": 1},
    }


def main():
    endpoint = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    resource = parse_pairs(os.environ.get("OTEL_RESOURCE_ATTRIBUTES"))
    headers = parse_pairs(os.environ.get("OTEL_EXPORTER_OTLP_HEADERS"))
    task = json.loads(os.environ.get("AGL_TASK_INPUT") or "null") or {}
    question = "Find facts about %s" % task.get("topic", "rivers")

    kickoff = span("Crew.kickoff", {"openinference.span.kind": "CHAIN", "crew_id": "crew-1"})
    researcher = span(
        "Researcher._execute_core",
        {"openinference.span.kind": "AGENT", "graph.node.id": "Researcher", "task_id": "task-1"},
        kickoff,
    )
    llm = span(
        "completion",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o-mini",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": question,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "It is long.",
            "llm.token_count.prompt": 11,
            "llm.token_count.completion": 4,
        },
        researcher,
    )
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "crewai-agent")] + [attr(k, v) for k, v in resource.items()]},
                "scopeSpans": [
                    {
                        "scope": {"name": "openinference.instrumentation.crewai", "version": "0.1.11"},
                        "spans": [llm, researcher, kickoff],
                    }
                ],
            }
        ]
    }
    request = urllib.request.Request(
        endpoint, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, reply = response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        status, reply = err.code, err.read().decode()
    print(json.dumps({"endpoint": endpoint, "resource": sorted(resource), "headers": sorted(headers), "status": status, "reply": reply}))
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
