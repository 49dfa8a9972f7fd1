#!/usr/bin/env python3
"""Replays the request sequence of Agent Lightning 0.3's LightningStoreClient against an AGL store server.

Standard library only. Usage: agl03_client_replay.py BASE_URL [TOKEN]

Each call sends exactly what AGL 0.3's client sends (reference v0 section 3.5: routes, methods, JSON bodies with
pydantic's nulls, no body where the client sends none) and checks the status and the full response shape (every
declared key present, types right). Prints one line per call and "REPLAY OK <n> checks" at the end; exits 1 on the
first mismatch.
"""

import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/")
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None
API = BASE + "/v1/agl"

ROLLOUT_KEYS = {"rollout_id", "input", "start_time", "end_time", "mode", "resources_id", "status", "config", "metadata"}
CONFIG_KEYS = {"timeout_seconds", "unresponsive_seconds", "max_attempts", "retry_condition"}
ATTEMPT_KEYS = {"rollout_id", "attempt_id", "sequence_id", "start_time", "end_time", "status", "worker_id",
                "last_heartbeat_time", "metadata"}
WORKER_KEYS = {"worker_id", "status", "heartbeat_stats", "last_heartbeat_time", "last_dequeue_time", "last_busy_time",
               "last_idle_time", "current_rollout_id", "current_attempt_id"}
RESOURCES_KEYS = {"resources_id", "create_time", "update_time", "version", "resources"}
SPAN_KEYS = {"rollout_id", "attempt_id", "sequence_id", "trace_id", "span_id", "parent_id", "name", "status",
             "attributes", "events", "links", "start_time", "end_time", "context", "parent", "resource"}
PAGE_KEYS = {"items", "limit", "offset", "total"}
STATS_KEYS = {"name", "total_rollouts", "total_attempts", "total_spans", "total_resources", "total_workers", "uptime"}

checks = 0


def fail(message):
    print("REPLAY FAILED: " + message)
    sys.exit(1)


def check(condition, message):
    global checks
    checks += 1
    if not condition:
        fail(message)


def request(method, path, body=None, send_body=True, base=API):
    """One HTTP call like httpx in the AGL client: JSON body when given, none when the client passes json=None."""
    data = None
    headers = {"Accept": "application/json"}
    if TOKEN:
        headers["Authorization"] = "Bearer " + TOKEN
    if send_body and body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as err:
        raw = err.read()
        status = err.code
    text = raw.decode("utf-8")
    value = json.loads(text) if text else None
    print("%s %s -> %d" % (method, path, status))
    return status, value


def expect(method, path, status, body=None, send_body=True):
    got, value = request(method, path, body, send_body)
    check(got == status, "%s %s: expected %d, got %d: %r" % (method, path, status, got, value))
    return value


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_keys(obj, keys, what, exact=True):
    check(isinstance(obj, dict), "%s: expected an object, got %r" % (what, obj))
    missing = keys - set(obj)
    check(not missing, "%s: missing keys %s" % (what, sorted(missing)))
    if exact:
        extra = set(obj) - keys
        check(not extra, "%s: unexpected keys %s" % (what, sorted(extra)))


def check_rollout(obj, what="rollout", attempted=None):
    keys = ROLLOUT_KEYS | ({"attempt"} if obj.get("attempt") is not None else set())
    check_keys(obj, keys, what)
    check(isinstance(obj["rollout_id"], str) and obj["rollout_id"], what + ".rollout_id")
    check(is_number(obj["start_time"]), what + ".start_time must be a float")
    check(obj["status"] in ("queuing", "preparing", "running", "succeeded", "failed", "cancelled", "requeuing"),
          what + ".status")
    check_keys(obj["config"], CONFIG_KEYS, what + ".config")
    if attempted is True:
        check("attempt" in obj, what + ": expected an AttemptedRollout")
    if attempted is False:
        check("attempt" not in obj, what + ": expected a plain Rollout")
    if "attempt" in obj:
        check_attempt(obj["attempt"], what + ".attempt")
        check(obj["attempt"]["rollout_id"] == obj["rollout_id"], what + ".attempt.rollout_id")


def check_attempt(obj, what="attempt"):
    check_keys(obj, ATTEMPT_KEYS, what)
    check(isinstance(obj["sequence_id"], int) and obj["sequence_id"] >= 1, what + ".sequence_id")
    check(obj["status"] in ("preparing", "running", "succeeded", "failed", "unresponsive", "timeout"), what + ".status")


def check_worker(obj, what="worker"):
    check_keys(obj, WORKER_KEYS, what)
    check(obj["status"] in ("idle", "busy", "unknown"), what + ".status")


def check_resources(obj, what="resources"):
    check_keys(obj, RESOURCES_KEYS, what)
    check(isinstance(obj["version"], int), what + ".version")
    for name, res in obj["resources"].items():
        check(res["resource_type"] in ("llm", "proxy_llm", "prompt_template"), what + "." + name)


def check_span(obj, what="span"):
    check_keys(obj, SPAN_KEYS, what, exact=False)
    check_keys(obj["status"], {"status_code", "description"}, what + ".status", exact=False)
    check_keys(obj["resource"], {"attributes", "schema_url"}, what + ".resource", exact=False)


def check_page(obj, item_check, what):
    check_keys(obj, PAGE_KEYS, what)
    check(isinstance(obj["items"], list) and isinstance(obj["total"], int), what + " items/total")
    for i, item in enumerate(obj["items"]):
        item_check(item, "%s.items[%d]" % (what, i))
    return obj


def enqueue_request(inp, mode=None, config=None):
    # EnqueueRolloutRequest.model_dump(): every field, None as null
    return {"input": inp, "mode": mode, "resources_id": None, "config": config, "metadata": None}


def main():
    health = expect("GET", "/health", 200)
    check(health == {"status": "ok"}, "health body")

    # add_resources / update_resources / get_latest_resources / get_resources_by_id / query_resources
    llm = {"resource_type": "llm", "endpoint": "http://127.0.0.1:8000/v1", "model": "qwen", "api_key": None,
           "sampling_parameters": {"temperature": 0.7}}
    added = expect("POST", "/resources", 201, {"main_llm": llm})
    check_resources(added, "add_resources")
    prompt = {"resource_type": "prompt_template", "template": "Q: {q}", "engine": "f-string"}
    updated = expect("POST", "/resources/default", 200, {"system": prompt})
    check_resources(updated, "update_resources")
    check(updated["version"] == 1, "update_resources version 1")
    updated = expect("POST", "/resources/default", 200, {"system": prompt})
    check(updated["version"] == 2, "update_resources version 2")
    latest = expect("GET", "/resources/latest", 200)
    check_resources(latest, "get_latest_resources")
    check(latest["resources_id"] == "default", "latest resources id")
    check_resources(expect("GET", "/resources/" + added["resources_id"], 200), "get_resources_by_id")
    check(expect("GET", "/resources/rs-does-not-exist", 200) is None, "unknown resources -> null")
    check_page(expect("GET", "/resources?limit=-1&offset=0", 200), check_resources, "query_resources")

    # start_rollout (worker_id given) -> 201 AttemptedRollout
    started = expect("POST", "/rollouts", 201, dict(enqueue_request({"q": "1+1"}, "train"), worker_id="Worker-0"))
    check_rollout(started, "start_rollout", attempted=True)
    check(started["status"] == "preparing" and started["resources_id"] == "default", "start_rollout status/resources")

    # enqueue_many_rollouts -> one request, 201, same order
    config = {"timeout_seconds": None, "unresponsive_seconds": None, "max_attempts": 2, "retry_condition": ["failed"]}
    batch = expect("POST", "/queues/rollouts/enqueue", 201,
                   {"rollouts": [enqueue_request({"q": str(i)}, "val", config if i == 0 else None) for i in range(3)]})
    check(isinstance(batch, list) and len(batch) == 3, "enqueue returns 3")
    for i, r in enumerate(batch):
        check_rollout(r, "enqueue[%d]" % i, attempted=False)
        check(r["status"] == "queuing" and r["input"] == {"q": str(i)}, "enqueue order/status")
    check(batch[0]["config"]["max_attempts"] == 2, "config kept")
    check(batch[1]["metadata"] == {}, "metadata defaults to {}")

    # dequeue_rollout / dequeue_many_rollouts
    claimed = expect("POST", "/queues/rollouts/dequeue", 200, {"limit": 1, "worker_id": "Worker-1"})
    check(len(claimed) == 1, "dequeue one")
    check_rollout(claimed[0], "dequeue", attempted=True)
    check(claimed[0]["rollout_id"] == batch[0]["rollout_id"], "FIFO")
    check(claimed[0]["attempt"]["worker_id"] == "Worker-1", "dequeue worker")
    many = expect("POST", "/queues/rollouts/dequeue", 200, {"limit": 5})
    check([r["rollout_id"] for r in many] == [batch[1]["rollout_id"], batch[2]["rollout_id"]], "dequeue many FIFO")
    check(expect("POST", "/queues/rollouts/dequeue", 200, {"limit": 1, "worker_id": "Worker-1"}) == [], "empty queue")

    rid = claimed[0]["rollout_id"]
    aid = claimed[0]["attempt"]["attempt_id"]

    # get_next_span_sequence_id + add_span (full Span dump) + duplicate
    seq = expect("POST", "/spans/next", 200, {"rollout_id": rid, "attempt_id": aid})
    check(seq == {"sequence_id": 1}, "first sequence id")
    span = {
        "rollout_id": rid, "attempt_id": aid, "sequence_id": seq["sequence_id"],
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "parent_id": None,
        "name": "openai.chat.completion", "status": {"status_code": "OK", "description": None},
        "attributes": {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "1+1", "prompt_token_ids": [1, 2]},
        "events": [], "links": [], "start_time": 1700000000.5, "end_time": 1700000001.0,
        "context": {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "is_remote": False,
                    "trace_state": {}},
        "parent": None, "resource": {"attributes": {"service.name": "py"}, "schema_url": ""},
        "kind": "SpanKind.INTERNAL",
    }
    stored = expect("POST", "/spans", 201, span)
    check_span(stored, "add_span")
    check(stored.get("kind") == "SpanKind.INTERNAL", "unknown span keys are kept")
    check(expect("POST", "/spans", 201, span) is None, "duplicate span -> null")
    reward = dict(span, span_id="00f067aa0ba902b8", sequence_id=2, name="agentlightning.annotation",
                  attributes={"agentlightning.reward.0.name": "primary", "agentlightning.reward.0.value": 1.0})
    check_span(expect("POST", "/spans", 201, reward), "add_span reward")

    # query_spans (POST search, nulls for unused filters)
    spans = expect("POST", "/spans/search", 200, {
        "rollout_id": rid, "attempt_id": "latest", "trace_id": None, "trace_id_contains": None, "span_id": None,
        "span_id_contains": None, "parent_id": None, "parent_id_contains": None, "name": None, "name_contains": None,
        "filter_logic": "and", "limit": -1, "offset": 0, "sort_by": "sequence_id", "sort_order": "asc"})
    check_page(spans, check_span, "query_spans")
    check([s["sequence_id"] for s in spans["items"]] == [1, 2], "spans in sequence order")

    # the span was a heartbeat: attempt and rollout are running
    got = expect("GET", "/rollouts/" + rid, 200)
    check_rollout(got, "get_rollout_by_id", attempted=True)
    check(got["status"] == "running" and got["attempt"]["status"] == "running", "heartbeat -> running")
    check(expect("GET", "/rollouts/ro-does-not-exist", 200) is None, "unknown rollout -> null")

    # update_attempt (only given keys), get_latest_attempt, query_attempts
    att = expect("POST", "/rollouts/%s/attempts/%s" % (rid, aid), 200, {"status": "failed"})
    check_attempt(att, "update_attempt")
    check(att["status"] == "failed" and is_number(att["end_time"]), "attempt failed with end_time")
    latest_att = expect("GET", "/rollouts/%s/attempts/latest" % rid, 200)
    check_attempt(latest_att, "get_latest_attempt")
    requeued = expect("GET", "/rollouts/" + rid, 200)
    check(requeued["status"] == "requeuing", "retry policy -> requeuing")

    # start_attempt with worker_id None: no body
    retried = expect("POST", "/rollouts/%s/attempts" % rid, 201, None, send_body=False)
    check_rollout(retried, "start_attempt", attempted=True)
    check(retried["attempt"]["sequence_id"] == 2, "start_attempt sequence 2")
    attempts = expect("POST", "/rollouts/%s/attempts/search" % rid, 200,
                      {"limit": -1, "offset": 0, "sort_by": "sequence_id", "sort_order": "asc"})
    check_page(attempts, check_attempt, "query_attempts")
    check(attempts["total"] == 2, "two attempts")

    # update_rollout (only given keys; null allowed for metadata)
    upd = expect("POST", "/rollouts/" + rid, 200, {"metadata": None, "mode": "test"})
    check_rollout(upd, "update_rollout", attempted=False)
    check(upd["metadata"] is None and upd["mode"] == "test", "update_rollout applied")
    done = expect("POST", "/rollouts/" + batch[1]["rollout_id"], 200, {"status": "cancelled"})
    check(done["status"] == "cancelled" and is_number(done["end_time"]), "cancelled sets end_time")

    # query_rollouts (POST search, as the client builds it)
    page = expect("POST", "/rollouts/search", 200,
                  {"limit": -1, "offset": 0, "filter_logic": "and", "status_in": ["cancelled", "preparing"]})
    check_page(page, lambda item, what: check_rollout(item, what), "query_rollouts")
    check(page["total"] == 4, "query_rollouts total (1 cancelled + 3 preparing)")
    page = expect("POST", "/rollouts/search", 200,
                  {"limit": 1, "offset": 0, "filter_logic": "or", "rollout_id_contains": rid[-4:],
                   "sort_by": "start_time", "sort_order": "desc"})
    check(page["limit"] == 1 and len(page["items"]) <= 1, "query_rollouts pagination")

    # wait_for_rollouts (the client refuses timeouts > 0.1)
    waited = expect("POST", "/waits/rollouts", 200,
                    {"rollout_ids": [batch[1]["rollout_id"], rid, "ro-unknown"], "timeout": 0.1})
    check([r["rollout_id"] for r in waited] == [batch[1]["rollout_id"]], "only finished rollouts")
    check_rollout(waited[0], "wait_for_rollouts", attempted=False)

    # workers: update_worker (heartbeat), get_worker_by_id, query_workers (no limit/offset: quirk 10)
    worker = expect("POST", "/workers/Worker-0", 200, {"heartbeat_stats": {"cpu_percent": 12.5, "mem": 0.3}})
    check_worker(worker, "update_worker")
    check(worker["status"] == "busy" and worker["heartbeat_stats"]["cpu_percent"] == 12.5, "heartbeat keeps status")
    check_worker(expect("POST", "/workers/Worker-9", 200, None, send_body=False), "update_worker without stats")
    check_worker(expect("GET", "/workers/Worker-1", 200), "get_worker_by_id")
    check(expect("GET", "/workers/nobody", 200) is None, "unknown worker -> null")
    workers = expect("POST", "/workers/search", 200, {"filter_logic": "and", "status_in": None, "worker_id_contains": "Worker"})
    check_page(workers, check_worker, "query_workers")
    check(workers["limit"] == -1 and workers["offset"] == 0, "server defaults for limit/offset")

    # GET variants return the same data as the POST /search ones
    get_page = expect("GET", "/rollouts?status_in=cancelled&status_in=preparing", 200)
    check(get_page["total"] == 4, "GET /rollouts same as search")

    # statistics
    stats = expect("GET", "/statistics", 200)
    check_keys(stats, STATS_KEYS, "statistics", exact=False)
    check(stats["total_rollouts"] == 4 and stats["total_spans"] == 2, "statistics counts")

    # checklist 31: caller mistakes are 4xx (AGL answers 422/400; we add 404 where AGL says 500)
    expect("POST", "/queues/rollouts/enqueue", 422, {})
    check(expect("POST", "/queues/rollouts/dequeue", 200, {"limit": 0}) == [], "limit 0 dequeue")
    expect("GET", "/rollouts?sort_by=nonexistent_field", 400)
    expect("POST", "/rollouts/" + rid, 400, {"status": None})
    expect("POST", "/rollouts/%s/attempts/%s" % (rid, aid), 400, {"worker_id": None})
    expect("POST", "/workers/Worker-0", 400, {"heartbeat_stats": None})
    expect("POST", "/rollouts/ro-unknown", 404, {"status": "failed"})

    print("REPLAY OK %d checks" % checks)


if __name__ == "__main__":
    main()
