"""Replay a recorded OTLP export in place of team.py (Python standard library only; this one runs here).

It behaves like team.py towards AGL: it reads AGL_TASK_INPUT, sends the spans recorded for that task to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as OTLP/JSON) with OTEL_EXPORTER_OTLP_HEADERS, setting the resource attributes from
OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry SDK does, then posts the reward to AGL_EVENT_URL. Trace and span ids are
renewed and timestamps moved to now, so the same recording can be replayed many times into one store.

Usage: python3 replay_otlp.py <fixture.json>
"""

import json
import os
import secrets
import sys
import time
import urllib.parse
import urllib.request


def otlp_value(value: str) -> dict:
    return {"stringValue": urllib.parse.unquote(value)}


def renew_ids(request: dict) -> None:
    new_ids: dict = {}

    def fresh(old: str) -> str:
        if old not in new_ids:
            new_ids[old] = secrets.token_hex(len(old) // 2)
        return new_ids[old]

    spans = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    shift = time.time_ns() - min(int(s["startTimeUnixNano"]) for s in spans)
    for span in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            if span.get(key):
                span[key] = fresh(span[key])
        for key in ("startTimeUnixNano", "endTimeUnixNano"):
            span[key] = str(int(span[key]) + shift)


def post(url: str, body: dict, headers: dict) -> dict:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **headers}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as res:
        text = res.read().decode() or "{}"
        return {"status": res.status, "body": json.loads(text)}


def main() -> None:
    task = json.loads(os.environ["AGL_TASK_INPUT"])
    with open(sys.argv[1], encoding="utf-8") as f:
        recording = json.load(f)[task["id"]]
    request = recording["otlp"]
    renew_ids(request)
    extra = [kv.split("=", 1) for kv in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(",") if "=" in kv]
    for rs in request["resourceSpans"]:
        rs["resource"]["attributes"] += [{"key": k.strip(), "value": otlp_value(v.strip())} for k, v in extra]
    headers = {}
    for kv in os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "").split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            headers[k.strip()] = urllib.parse.unquote(v.strip())
    sent = post(os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], request, headers)
    rejected = sent["body"].get("partialSuccess", {}).get("rejectedSpans", 0)
    if sent["status"] != 200 or int(rejected or 0) > 0:
        sys.exit(f"OTLP export was not fully accepted: {sent}")
    answer = recording["final_answer"]
    reward = 1.0 if answer.strip().replace(",", "") == task["answer"] else 0.0
    key = os.environ.get("AGL_KEY")
    post(os.environ["AGL_EVENT_URL"], {"event_type": "reward", "data": {"value": reward}}, {"authorization": f"Bearer {key}"} if key else {})
    print(json.dumps({"task": task["id"], "answer": answer, "reward": reward, "spans_sent": sum(len(ss["spans"]) for rs in request["resourceSpans"] for ss in rs["scopeSpans"])}))


if __name__ == "__main__":
    main()
